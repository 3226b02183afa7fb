import { iface } from '@restatedev/restate-sdk-core'

/**
 * The durable names and shapes of the live-replica registry: the `live_replicas` virtual object, under one key, holds
 * the live hub URL each services replica registered, with a lease. The services register and refresh their own URL
 * and deregister it when they stop cleanly; the gateways read the list. These names are in journals: never rename them.
 */

/** Name of the registry's virtual object. Durable: never rename. */
export const LIVE_REPLICAS_SERVICE = 'live_replicas'
/** The registry's one key: every replica of the deployment registers under it. Durable: never rename. */
export const LIVE_REPLICAS_KEY = 'hubs'
/** State key of the registered replicas, by URL. Durable: never rename. */
export const LIVE_REPLICAS_STATE_KEY = 'replicas'

/** State key of the awakeables of the gateways waiting for the list to change. Durable: never rename. */
export const LIVE_REPLICAS_WATCHERS_STATE_KEY = 'watchers'
/** Name of the service where a gateway parks until the registry's list changes. Durable: never rename. */
export const LIVE_REPLICAS_WATCH_SERVICE = 'live_replicas_watch'

/** A replica's claim to a live hub URL, which only a holder of the live token can make (see `replica-proof.ts`). */
export interface LiveReplicaClaim {
  /** The hub's base URL as the gateways reach it, e.g. `http://10.0.0.5:9180`. */
  url: string
  /** A random id of the process that serves the URL: a deregistration by an earlier process leaves a later one alone. */
  instance: string
  /** HMAC-SHA256 of the URL and the instance with the live token (`replicaProof`), base64url. */
  proof: string
}

/** Input of `live_replicas/hubs/register` (exclusive): registers or refreshes the claim for `leaseMs`. */
export interface RegisterReplicaRequest extends LiveReplicaClaim {
  leaseMs: number
}

/** Input of `live_replicas/hubs/deregister` (exclusive): removes the URL while `instance` still holds it. */
export type DeregisterReplicaRequest = LiveReplicaClaim

/** One registered replica, as `live_replicas/hubs/list` (shared) returns the unexpired ones. */
export interface LiveReplica extends LiveReplicaClaim {
  /** When the lease ends, on the clock of the services process that ran the registration. */
  expiresAtMs: number
}

/**
 * Input of `live_replicas/hubs/subscribe` (exclusive): resolve `awakeableId` with the list once it differs from what
 * the caller holds (`known`, see {@link registryVersion}), at once when it already does.
 */
export interface SubscribeReplicasRequest { awakeableId: string; known: string }

/** Input of `live_replicas/hubs/unsubscribe` (exclusive): forget a wait that timed out. */
export interface UnsubscribeReplicasRequest { awakeableId: string }

/** Input of `live_replicas_watch/wait`: the list the caller holds (`known`) and its longest wait. */
export interface WatchReplicasRequest { known: string; timeoutMs: number }

/** Output of `live_replicas_watch/wait`: the list once it changed, or null when `timeoutMs` passed first. */
export type WatchReplicasResult = LiveReplica[] | null

/**
 * What a list of registrations is, for telling whether it changed: each URL with the process that holds it, sorted. A
 * lease refreshed is the same list; a replica that came, went, or restarted (a new `instance`) is another.
 */
export function registryVersion(replicas: readonly Pick<LiveReplica, 'url' | 'instance'>[]): string {
  return replicas.map(replica => `${replica.url} ${replica.instance}`).sort().join('\n')
}

/**
 * The registry's interface, where its typed clients come from (`connect(…).client(liveReplicasInterface, key)`):
 * `register`, `deregister`, `subscribe` and `unsubscribe` are exclusive, `list` is shared (it never waits behind a
 * registration).
 */
export const liveReplicasInterface = iface.object(LIVE_REPLICAS_SERVICE, {
  register: iface.json<RegisterReplicaRequest, void>(),
  deregister: iface.json<DeregisterReplicaRequest, void>(),
  list: iface.shared.json<void, LiveReplica[]>(),
  subscribe: iface.json<SubscribeReplicasRequest, void>(),
  unsubscribe: iface.json<UnsubscribeReplicasRequest, void>(),
})

/** The watch service's interface: `wait` parks (suspended in Restate) until the list changes or the wait times out. */
export const liveReplicasWatchInterface = iface.service(LIVE_REPLICAS_WATCH_SERVICE, {
  wait: iface.json<WatchReplicasRequest, WatchReplicasResult>(),
})

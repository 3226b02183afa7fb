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
 * The registry's interface, where its typed clients come from (`connect(…).client(liveReplicasInterface, key)`):
 * `register` and `deregister` are exclusive, `list` is shared (it never waits behind a registration).
 */
export const liveReplicasInterface = iface.object(LIVE_REPLICAS_SERVICE, {
  register: iface.json<RegisterReplicaRequest, void>(),
  deregister: iface.json<DeregisterReplicaRequest, void>(),
  list: iface.shared.json<void, LiveReplica[]>(),
})

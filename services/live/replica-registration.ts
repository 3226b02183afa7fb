import { randomBytes } from 'node:crypto'
import * as clients from '@restatedev/restate-sdk-clients'
import { replicaProof } from './replica-proof'
import { LIVE_REPLICAS_KEY, liveReplicasInterface } from '../../contract/live-replicas'
import type { LiveReplicaClaim } from '../../contract/live-replicas'

/** Options of {@link startReplicaRegistration}. */
export interface ReplicaRegistrationOptions {
  /** Restate's ingress as the services reach it (`RESTATE_INGRESS_URL`). */
  ingressUrl: string
  /** The hub's URL as the gateways reach it (`ZIDANE_LIVE_ADVERTISED_URL`). */
  url: string
  /** The live token the claim is proven with. */
  token: string
  /** How long a registration holds without a refresh (`ZIDANE_LIVE_LEASE_MS`); it is refreshed every third of it. */
  leaseMs: number
  /** Where the registration reports that it took, and that it has failed for a whole lease (the gateways lost the hub). */
  log?: (line: string) => void
}

/** A running registration of this process's live hub. */
export interface ReplicaRegistration {
  readonly claim: LiveReplicaClaim
  /** Stops refreshing and deregisters, waiting (at most 2 s) until the registry has run it. */
  stop(): Promise<void>
}

/**
 * Registers this process's live hub in the `live_replicas` registry through Restate's ingress, then refreshes the
 * lease every third of it. A failed attempt is tried again within a second, and every 200 ms until the first one
 * succeeds: at start-up the deployment is being registered, and a gateway that finds no hub yet misses the deltas of
 * steps that end before it does.
 */
export function startReplicaRegistration(options: ReplicaRegistrationOptions): ReplicaRegistration {
  const log = options.log ?? ((line: string) => console.log(line))
  // Drawn once per process, outside any handler: it names this process, not a step.
  const instance = randomBytes(12).toString('base64url')
  const claim: LiveReplicaClaim = { url: options.url, instance, proof: replicaProof(options.token, options.url, instance) }
  const ingress = clients.connect({ url: options.ingressUrl })
  const refreshMs = Math.max(100, Math.floor(options.leaseMs / 3))
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  let registered = false
  let failureReported = false
  let failingSinceMs: number | undefined
  const refresh = async (): Promise<void> => {
    try {
      await ingress.client(liveReplicasInterface, LIVE_REPLICAS_KEY).register({ ...claim, leaseMs: options.leaseMs }, clients.rpc.opts({ timeout: refreshMs }))
      if (!registered) log(`zidane services: live hub registered as ${options.url} (lease ${options.leaseMs} ms)`)
      registered = true
      failureReported = false
      failingSinceMs = undefined
      schedule(refreshMs)
    } catch (error) {
      failingSinceMs ??= performance.now()
      if (!failureReported && performance.now() - failingSinceMs >= options.leaseMs) {
        registered = false
        failureReported = true
        log(`zidane services: the live hub's registration has failed for ${options.leaseMs} ms, so gateways do not see it (${error instanceof Error ? error.message : String(error)}); retrying`)
      }
      schedule(Math.min(registered ? 1_000 : 200, refreshMs))
    }
  }
  const schedule = (delayMs: number): void => {
    if (stopped) return
    timer = setTimeout(() => { void refresh() }, delayMs)
    timer.unref()
  }
  void refresh()
  return {
    claim,
    async stop() {
      stopped = true
      clearTimeout(timer)
      // Awaited, and before the drain refuses new requests: a deregistration left queued would be retried against a
      // process that is leaving (a warning per retry, and on a single replica until it starts again). A registration
      // still on its way was enqueued on the registry's key before this: Restate runs it first.
      await ingress.client(liveReplicasInterface, LIVE_REPLICAS_KEY).deregister(claim, clients.rpc.opts({ timeout: 2_000 })).catch(() => undefined)
    },
  }
}

import { createLiveTracker } from './live-tracker'
import { discoveredReplicas, fixedReplicas } from './live-replicas'
import type { LiveReplicaDirectory } from './live-replicas'
import { LiveUpstream } from './live-upstream'
import type { LiveUpstreamOptions } from './live-upstream'
import type { LiveEvent } from './live-tracker'

export type { LiveEvent, ModelDeltaEvent, ModelSupersededEvent } from './live-tracker'

/** Where the services' live hubs are and how to reach them. */
export interface LiveDeltasOptions extends LiveUpstreamOptions {
  /** Fixed hub URLs, one per services replica (`ZIDANE_LIVE_URLS`), e.g. `http://127.0.0.1:9180`: then nothing is discovered. */
  urls?: readonly string[]
  /** Without `urls`: Restate's ingress, where the hubs the services replicas registered are read (`live_replicas`). */
  registryUrl?: string
  /** Longest wait of the gateway's parked watch of the registry (`ZIDANE_LIVE_REFRESH_MS`, default 60000). */
  refreshMs?: number
  /** Where the hubs are, in place of `urls` and `registryUrl` (tests). */
  replicas?: LiveReplicaDirectory
}

/** Follows sessions' live deltas on the services. */
export interface LiveDeltas {
  /**
   * Calls `onEvent` with the live events of `sessionKey`: first the deltas of the attempts in progress from their
   * start, then new ones, and `model:superseded` when an attempt is made again. The viewers of one session share
   * one connection to every hub (reconnecting with backoff), closed when the last returned function is called.
   */
  subscribeLive(sessionKey: string, onEvent: (event: LiveEvent) => void): () => void
}

/**
 * Live deltas from the hubs at `options.urls`, or else from those registered in Restate: one upstream per followed
 * session, shared by its viewers.
 */
export function createLiveDeltas(options: LiveDeltasOptions): LiveDeltas {
  const replicas = options.replicas ?? replicasOf(options)
  const upstreams = new Map<string, LiveUpstream>()
  return {
    subscribeLive(sessionKey, onEvent) {
      let upstream = upstreams.get(sessionKey)
      if (upstream === undefined) {
        upstream = new LiveUpstream(sessionKey, options, replicas)
        upstreams.set(sessionKey, upstream)
      }
      const joined = upstream
      const viewer = joined.join(createLiveTracker(onEvent))
      let left = false
      return () => {
        if (left) return
        left = true
        if (joined.leave(viewer) && upstreams.get(sessionKey) === joined) upstreams.delete(sessionKey)
      }
    },
  }
}

function replicasOf(options: LiveDeltasOptions): LiveReplicaDirectory {
  if (options.urls !== undefined || options.registryUrl === undefined) return fixedReplicas(options.urls ?? [])
  const registryUrl = options.registryUrl
  return discoveredReplicas({ ingressUrl: registryUrl, token: options.token, ...(options.refreshMs === undefined ? {} : { refreshMs: options.refreshMs }), onError: error => options.onError?.(registryUrl, error) })
}

/** No hub configured: subscriptions see nothing. */
export const NO_LIVE_DELTAS: LiveDeltas = { subscribeLive: () => () => undefined }

import { createLiveTracker } from './live-tracker'
import { LiveUpstream } from './live-upstream'
import type { LiveEvent } from './live-tracker'

export type { LiveEvent, ModelDeltaEvent, ModelSupersededEvent } from './live-tracker'

/** Where the services' live hubs are and how to reach them. */
export interface LiveDeltasOptions {
  /** One base URL per services replica (`ZIDANE_LIVE_URLS`, comma-separated), e.g. `http://127.0.0.1:9081`. */
  urls: readonly string[]
  /** The internal shared token (`ZIDANE_LIVE_TOKEN`). */
  token: string
  /** First wait before reconnecting to a hub that failed or closed (default 100 ms); doubles up to `maxBackoffMs`. */
  minBackoffMs?: number
  /** Longest wait between reconnects (default 1 s). */
  maxBackoffMs?: number
  /** Told about failed connections (a hub down, a wrong token); default silent. */
  onError?: (url: string, error: unknown) => void
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

/** Live deltas from the hubs at `options.urls`: one upstream per followed session, shared by its viewers. */
export function createLiveDeltas(options: LiveDeltasOptions): LiveDeltas {
  const upstreams = new Map<string, LiveUpstream>()
  return {
    subscribeLive(sessionKey, onEvent) {
      let upstream = upstreams.get(sessionKey)
      if (upstream === undefined) {
        upstream = new LiveUpstream(sessionKey, options)
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

/** No hub configured: subscriptions see nothing. */
export const NO_LIVE_DELTAS: LiveDeltas = { subscribeLive: () => () => undefined }

import type { LiveMessage } from '../services/live/live-delta'
import { liveStreamPath } from '../services/live/live-delta'
import { createLiveTracker } from './live-tracker'
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
   * start, then new ones, and `model:superseded` when an attempt is made again. Stays connected to every hub
   * (reconnecting with backoff) until the returned function is called.
   */
  subscribeLive(sessionKey: string, onEvent: (event: LiveEvent) => void): () => void
}

/** Live deltas from the hubs at `options.urls`. */
export function createLiveDeltas(options: LiveDeltasOptions): LiveDeltas {
  return {
    subscribeLive(sessionKey, onEvent) {
      const stop = new AbortController()
      const accept = createLiveTracker(onEvent)
      for (const url of options.urls) void followHub(url, sessionKey, options, accept, stop.signal)
      return () => stop.abort()
    },
  }
}

/** No hub configured: subscriptions see nothing. */
export const NO_LIVE_DELTAS: LiveDeltas = { subscribeLive: () => () => undefined }

async function followHub(url: string, sessionKey: string, options: LiveDeltasOptions, accept: (message: LiveMessage['delta']) => void, signal: AbortSignal): Promise<void> {
  const minMs = options.minBackoffMs ?? 100
  let backoffMs = minMs
  while (!signal.aborted) {
    try {
      await readHub(url, sessionKey, options.token, accept, signal, () => { backoffMs = minMs })
    } catch (error) {
      if (signal.aborted) return
      options.onError?.(url, error)
    }
    await sleep(backoffMs, signal)
    backoffMs = Math.min(backoffMs * 2, options.maxBackoffMs ?? 1_000)
  }
}

/** One connection: resolves when the hub closes the stream, rejects when it fails. */
async function readHub(url: string, sessionKey: string, token: string, accept: (delta: LiveMessage['delta']) => void, signal: AbortSignal, onConnected: () => void): Promise<void> {
  const response = await fetch(`${url}${liveStreamPath(sessionKey)}`, { headers: { authorization: `Bearer ${token}` }, signal })
  if (!response.ok || response.body === null) throw new Error(`live hub ${url} answered ${response.status}`)
  onConnected()
  const decoder = new TextDecoder()
  let pending = ''
  for await (const chunk of response.body) {
    pending += decoder.decode(chunk, { stream: true })
    const lines = pending.split('\n')
    pending = lines.pop() ?? ''
    for (const line of lines) if (line !== '') accept((JSON.parse(line) as LiveMessage).delta)
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise(resolve => {
    const timer = setTimeout(done, ms)
    function done(): void {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}

import type { LiveDelta, LiveMessage } from '../services/live/live-delta'
import { liveStreamPath } from '../services/live/live-delta'
import type { LiveDeltasOptions } from './live-deltas'

/** A viewer of a shared upstream: it hears the connections opened at or after its `since` generation. */
export interface UpstreamViewer {
  since: number
  accept(delta: LiveDelta): void
}

/**
 * The one connection per services replica that a gateway keeps for a followed session, shared by its viewers. A
 * viewer that joins gets the attempts in progress from their start by a reconnect: the hubs replay them on every
 * connection, the viewers already there drop what they had (their trackers), and the newcomer hears only the new
 * connections (their generation), so it never gets a live delta before the replay.
 */
export class LiveUpstream {
  readonly viewers = new Set<UpstreamViewer>()
  private generation = 0
  private readonly stop = new AbortController()
  private readonly connections = new Set<AbortController>()

  constructor(private readonly sessionKey: string, private readonly options: LiveDeltasOptions) {
    for (const url of options.urls) void this.follow(url)
  }

  /** Adds a viewer, reconnecting when others are there already so that it gets the replay. */
  join(accept: (delta: LiveDelta) => void): UpstreamViewer {
    if (this.viewers.size > 0) {
      this.generation++
      for (const connection of this.connections) connection.abort()
    }
    const viewer = { since: this.generation, accept }
    this.viewers.add(viewer)
    return viewer
  }

  /** Removes a viewer; returns true when it was the last one (the upstream is closed). */
  leave(viewer: UpstreamViewer): boolean {
    this.viewers.delete(viewer)
    if (this.viewers.size > 0) return false
    this.stop.abort()
    return true
  }

  private async follow(url: string): Promise<void> {
    const minMs = this.options.minBackoffMs ?? 100
    let backoffMs = minMs
    while (!this.stop.signal.aborted) {
      const connection = new AbortController()
      this.connections.add(connection)
      const generation = this.generation
      const deliver = (delta: LiveDelta): void => { for (const viewer of this.viewers) if (viewer.since <= generation) viewer.accept(delta) }
      try {
        await readHub(url, this.sessionKey, this.options.token, deliver, AbortSignal.any([this.stop.signal, connection.signal]), () => { backoffMs = minMs })
      } catch (error) {
        if (!connection.signal.aborted && !this.stop.signal.aborted) this.options.onError?.(url, error)
      } finally {
        this.connections.delete(connection)
      }
      if (connection.signal.aborted) continue // a viewer joined: reconnect at once for its replay
      await sleep(backoffMs, this.stop.signal)
      backoffMs = Math.min(backoffMs * 2, this.options.maxBackoffMs ?? 1_000)
    }
  }
}

/** One connection: resolves when the hub closes the stream, rejects when it fails. */
async function readHub(url: string, sessionKey: string, token: string, accept: (delta: LiveDelta) => void, signal: AbortSignal, onConnected: () => void): Promise<void> {
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

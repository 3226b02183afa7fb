import { setTimeout as sleep } from 'node:timers/promises'
import type { LiveDelta, LiveMessage } from '../contract/live-delta'
import { liveStreamPath } from '../contract/live-delta'
import type { LiveReplicaDirectory } from './live-replicas'

/** How an upstream reaches the hubs: the shared token and the reconnect backoff. */
export interface LiveUpstreamOptions {
  /** The internal shared token (`ZIDANE_LIVE_TOKEN`). */
  token: string
  /** First wait before reconnecting to a hub that failed or closed (default 100 ms); doubles up to `maxBackoffMs`. */
  minBackoffMs?: number
  /** Longest wait between reconnects (default 1 s). */
  maxBackoffMs?: number
  /** Told about failed connections (a hub down, a wrong token); default silent. */
  onError?: (url: string, error: unknown) => void
}

/** A viewer of a shared upstream: it hears the connections opened at or after its `since` generation. */
export interface UpstreamViewer {
  since: number
  accept(delta: LiveDelta): void
}

/**
 * The one connection per services replica that a gateway keeps for a followed session, shared by its viewers. A
 * viewer that joins gets the attempts in progress from their start by a reconnect: the hubs replay them on every
 * connection, the viewers already there drop what they had (their trackers), and the newcomer hears only the new
 * connections (their generation), so it never gets a live delta before the replay. The replicas come from a
 * directory: a hub that appears is followed at once (its replay brings what it streamed so far), one that goes is left.
 */
export class LiveUpstream {
  readonly viewers = new Set<UpstreamViewer>()
  private generation = 0
  private readonly stop = new AbortController()
  private readonly connections = new Set<AbortController>()
  /** The followed hubs, each with what stops following it. */
  private readonly followed = new Map<string, AbortController>()
  private readonly unwatch: () => void

  constructor(private readonly sessionKey: string, private readonly options: LiveUpstreamOptions, replicas: LiveReplicaDirectory) {
    this.unwatch = replicas.watch(urls => { this.followOnly(urls) })
    this.followOnly(replicas.urls())
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
    this.unwatch()
    return true
  }

  /** Follows the hubs at `urls` and no others. */
  private followOnly(urls: readonly string[]): void {
    if (this.stop.signal.aborted) return
    for (const [url, following] of this.followed) {
      if (urls.includes(url)) continue
      following.abort()
      this.followed.delete(url)
    }
    for (const url of urls) {
      if (this.followed.has(url)) continue
      const following = new AbortController()
      this.followed.set(url, following)
      void this.follow(url, AbortSignal.any([this.stop.signal, following.signal]))
    }
  }

  private async follow(url: string, stop: AbortSignal): Promise<void> {
    const minMs = this.options.minBackoffMs ?? 100
    let backoffMs = minMs
    while (!stop.aborted) {
      const connection = new AbortController()
      this.connections.add(connection)
      const generation = this.generation
      const deliver = (delta: LiveDelta): void => { for (const viewer of this.viewers) if (viewer.since <= generation) viewer.accept(delta) }
      try {
        await readHub(url, this.sessionKey, this.options.token, deliver, AbortSignal.any([stop, connection.signal]), () => { backoffMs = minMs })
      } catch (error) {
        if (!connection.signal.aborted && !stop.aborted) this.options.onError?.(url, error)
      } finally {
        this.connections.delete(connection)
      }
      if (connection.signal.aborted) continue // a viewer joined: reconnect at once for its replay
      await sleep(backoffMs, undefined, { signal: stop }).catch(() => undefined)
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

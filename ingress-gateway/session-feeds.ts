import { setTimeout as sleep } from 'node:timers/promises'
import type { ReadEventsResult, SessionEvent, WatchResult } from '../contract/event-log'

/** How the feeds reach the session event logs in Restate. */
export interface EventLogSource {
  /** Events with `seq > after` (a shared handler; its journal is not retained). */
  read(key: string, after: number, limit: number): Promise<ReadEventsResult>
  /** Parks in Restate until the log of `key` holds more than `after` events, or `timeoutMs` passes. */
  watch(key: string, after: number, timeoutMs: number, signal: AbortSignal): Promise<WatchResult>
}

/** Timing of the feeds. */
export interface FeedOptions {
  /** Longest one parked watch lasts before it is renewed (an idle session costs one invocation per this period). */
  watchTimeoutMs: number
  /** Recent events a feed keeps, so that its viewers do not each read them from Restate. */
  bufferSize: number
  /** Waits between tries while Restate fails (doubling up to `maxBackoffMs`). */
  retryMs: number
  maxBackoffMs: number
}

/**
 * Longest a watch may park: Node's `fetch` gives up on a response whose headers have not come within 300 s, and a
 * parked watch sends none until it returns, so it must end well before that.
 */
export const MAX_WATCH_TIMEOUT_MS = 240_000

/** Defaults: watches renewed every 4 minutes, the last 500 events kept. */
export const DEFAULT_FEED_OPTIONS: FeedOptions = { watchTimeoutMs: MAX_WATCH_TIMEOUT_MS, bufferSize: 500, retryMs: 300, maxBackoffMs: 5_000 }

/** What a viewer hears from its feed besides new events: an outage of Restate (once per outage). */
export interface FeedListener { onError(error: unknown): void }

/**
 * One feed per session a gateway follows, shared by all its viewers: a single watch parked in Restate (an awakeable
 * the log resolves on its next append) wakes every viewer, and the new events are read once into a buffer the
 * viewers serve from. An idle session costs no invocation per poll; 500 viewers of one session cost one watch.
 */
export class SessionFeeds {
  private readonly feeds = new Map<string, SessionFeed>()

  constructor(private readonly source: EventLogSource, private readonly options: FeedOptions = DEFAULT_FEED_OPTIONS) {}

  /** Joins the feed of `key` (starting it on first use); the returned function leaves it. */
  join(key: string, listener: FeedListener): { feed: SessionFeed; leave: () => void } {
    let feed = this.feeds.get(key)
    if (!feed) {
      feed = new SessionFeed(key, this.source, this.options, () => this.feeds.delete(key))
      this.feeds.set(key, feed)
    }
    const joined = feed
    joined.add(listener)
    return { feed: joined, leave: () => joined.remove(listener) }
  }

  /** Sessions followed right now. */
  get size(): number {
    return this.feeds.size
  }
}

/** The shared follower of one session's event log (see {@link SessionFeeds}). */
export class SessionFeed {
  /** The log's count as last seen. */
  latest = 0
  private readonly listeners = new Set<FeedListener>()
  private buffer: SessionEvent[] = []
  private wakers: Array<() => void> = []
  private readonly stop = new AbortController()
  private running = false

  constructor(
    private readonly key: string,
    private readonly source: EventLogSource,
    private readonly options: FeedOptions,
    private readonly onIdle: () => void,
  ) {}

  add(listener: FeedListener): void {
    this.listeners.add(listener)
    if (!this.running) void this.follow()
  }

  remove(listener: FeedListener): void {
    this.listeners.delete(listener)
    if (this.listeners.size > 0) return
    this.stop.abort()
    this.onIdle()
  }

  /** Records what a viewer read itself (a catch-up page): the count it saw, and the events when they extend the buffer. */
  observe(result: ReadEventsResult): void {
    this.remember(result.events)
    if (result.count > this.latest) {
      this.latest = result.count
      this.wake()
    }
  }

  /** The buffered events after `cursor`, or `undefined` when the buffer does not reach back to it. */
  eventsAfter(cursor: number, limit: number): SessionEvent[] | undefined {
    const first = this.buffer[0]
    if (!first || first.seq > cursor + 1) return undefined
    return this.buffer.filter(event => event.seq > cursor).slice(0, limit)
  }

  /** Resolves once the log holds more than `cursor` events, or `signal` aborts. */
  async waitBeyond(cursor: number, signal: AbortSignal): Promise<void> {
    if (this.latest > cursor || signal.aborted) return
    await new Promise<void>((resolve) => {
      const done = (): void => {
        signal.removeEventListener('abort', done)
        resolve()
      }
      this.wakers.push(done)
      signal.addEventListener('abort', done, { once: true })
    })
  }

  private wake(): void {
    const wakers = this.wakers
    this.wakers = []
    for (const wake of wakers) wake()
  }

  private remember(events: readonly SessionEvent[]): void {
    const last = this.buffer.at(-1)?.seq
    const fresh = events.filter(event => last === undefined || event.seq > last)
    if (fresh.length === 0) return
    if (last !== undefined && fresh[0]!.seq !== last + 1) this.buffer = [] // a gap: start again from these
    this.buffer.push(...fresh)
    if (this.buffer.length > this.options.bufferSize) this.buffer = this.buffer.slice(-this.options.bufferSize)
  }

  /** The watch loop: parks in Restate, reads what arrived once, wakes the viewers; renews on timeout. */
  private async follow(): Promise<void> {
    this.running = true
    let failures = 0
    while (!this.stop.signal.aborted) {
      try {
        const { count } = await this.source.watch(this.key, this.latest, this.options.watchTimeoutMs, this.stop.signal)
        failures = 0
        if (count !== null && count > this.latest) await this.pull(count)
      } catch (error) {
        if (this.stop.signal.aborted) break
        if (failures++ === 0) for (const listener of this.listeners) listener.onError(error)
        await sleep(Math.min(this.options.retryMs * 2 ** failures, this.options.maxBackoffMs), undefined, { signal: this.stop.signal }).catch(() => undefined)
      }
    }
    this.running = false
  }

  /** Reads the events up to `count` into the buffer (once for every viewer), then wakes them. */
  private async pull(count: number): Promise<void> {
    let cursor = this.buffer.at(-1)?.seq ?? this.latest
    if (count - cursor > this.options.bufferSize) cursor = count - this.options.bufferSize
    while (cursor < count) {
      const page = await this.source.read(this.key, cursor, Math.min(500, count - cursor))
      this.remember(page.events)
      if (page.events.length === 0) break
      cursor = page.events.at(-1)!.seq
    }
    this.latest = Math.max(this.latest, count)
    this.wake()
  }
}

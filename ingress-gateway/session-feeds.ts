import { EventEmitter, once } from 'node:events'
import { setTimeout as sleep } from 'node:timers/promises'
import type { ReadEventsResult, SessionEvent, WatchResult } from '../contract/event-log'

/** How the feeds reach the session event logs in Restate. */
export interface EventLogSource {
  /** Events with `seq > after` (a shared handler; its journal is not retained). */
  read(key: string, after: number, limit: number): Promise<ReadEventsResult>
  /** Parks in Restate until the log of `key` holds more than `after` events, or `timeoutMs` passes. */
  watch(key: string, after: number, timeoutMs: number, signal: AbortSignal): Promise<WatchResult>
}

const BUFFER_SIZE = 500

/** Waits before retry number `attempt` (from 0) while Restate fails: 300 ms doubling up to 5 s, or until `signal` aborts. */
export async function backoff(attempt: number, signal: AbortSignal): Promise<void> {
  await sleep(Math.min(300 * 2 ** attempt, 5_000), undefined, { signal }).catch(() => undefined)
}

/** What a viewer hears from its feed besides new events: an outage of Restate (once per outage). */
type OnError = (error: unknown) => void

/**
 * One feed per followed session, shared by its viewers: one watch parked in Restate (an awakeable the log resolves on
 * its next append) wakes them all, and new events are read once into a buffer they serve from. An idle session costs
 * no polling; 500 viewers of one session cost one watch, renewed every `watchTimeoutMs`.
 */
export class SessionFeeds {
  private readonly feeds = new Map<string, SessionFeed>()

  constructor(private readonly source: EventLogSource, private readonly watchTimeoutMs: number) {}

  /** Joins the feed of `key` (starting it on first use); the returned function leaves it. */
  join(key: string, onError: OnError): { feed: SessionFeed; leave: () => void } {
    const feed = this.feeds.get(key) ?? new SessionFeed(key, this.source, this.watchTimeoutMs, () => this.feeds.delete(key))
    this.feeds.set(key, feed)
    feed.add(onError)
    return { feed, leave: () => feed.remove(onError) }
  }
}

/** The shared follower of one session's event log (see {@link SessionFeeds}). */
export class SessionFeed {
  /** The log's count as last seen. */
  latest = 0
  private readonly listeners = new Set<OnError>()
  private buffer: SessionEvent[] = []
  /** Emits `wake` when the log's count grows. */
  private readonly wakers = new EventEmitter().setMaxListeners(0)
  private readonly stop = new AbortController()

  /** Starts following at once: {@link SessionFeeds.join} adds the first viewer right after. */
  constructor(private readonly key: string, private readonly source: EventLogSource, private readonly watchTimeoutMs: number, private readonly onIdle: () => void) {
    void this.follow()
  }

  add(listener: OnError): void {
    this.listeners.add(listener)
  }

  remove(listener: OnError): void {
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
      this.wakers.emit('wake')
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
    await once(this.wakers, 'wake', { signal }).catch(() => undefined)
  }

  private remember(events: readonly SessionEvent[]): void {
    const last = this.buffer.at(-1)?.seq
    const fresh = events.filter(event => last === undefined || event.seq > last)
    if (fresh.length === 0) return
    if (last !== undefined && fresh[0]!.seq !== last + 1) this.buffer = [] // a gap: start again from these
    this.buffer.push(...fresh)
    if (this.buffer.length > BUFFER_SIZE) this.buffer = this.buffer.slice(-BUFFER_SIZE)
  }

  /** The watch loop: parks in Restate, reads what arrived once, wakes the viewers; renews on timeout. */
  private async follow(): Promise<void> {
    let failures = 0
    while (!this.stop.signal.aborted) {
      try {
        const watched = this.latest
        const { count, events } = await this.source.watch(this.key, watched, this.watchTimeoutMs, this.stop.signal)
        failures = 0
        if (count === null || count <= this.latest) continue
        if (events?.[0]?.seq === watched + 1 && events.at(-1)?.seq === count) this.take(events, count)
        else await this.pull(count)
      } catch (error) {
        if (this.stop.signal.aborted) break
        if (failures++ === 0) for (const listener of this.listeners) listener(error)
        await backoff(failures, this.stop.signal)
      }
    }
  }

  /** Takes the events a watch woke with (those up to `count`, right after what it watched past), then wakes the viewers. */
  private take(events: readonly SessionEvent[], count: number): void {
    this.remember(events)
    this.latest = Math.max(this.latest, count)
    this.wakers.emit('wake')
  }

  /** Reads the events up to `count` into the buffer (once for every viewer), then wakes them. */
  private async pull(count: number): Promise<void> {
    let cursor = this.buffer.at(-1)?.seq ?? this.latest
    if (count - cursor > BUFFER_SIZE) cursor = count - BUFFER_SIZE
    while (cursor < count) {
      const page = await this.source.read(this.key, cursor, Math.min(500, count - cursor))
      this.remember(page.events)
      if (page.events.length === 0) break
      cursor = page.events.at(-1)!.seq
    }
    this.latest = Math.max(this.latest, count)
    this.wakers.emit('wake')
  }
}

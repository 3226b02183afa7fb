import { describe, expect, it } from 'vitest'
import type { ReadEventsResult, SessionEvent, WatchResult } from '../../contract/event-log'
import { SessionFeeds } from '../../ingress-gateway/session-feeds'
import type { EventLogSource } from '../../ingress-gateway/session-feeds'

function event(seq: number): SessionEvent {
  return { seq, type: 'turn:end', at: seq, data: { runId: 'r1', turnId: `r1-t${seq}-a` } } as unknown as SessionEvent
}

/** A log of `events` whose watches answer from `wakes` in turn (then park until the test ends), counting reads. */
function fakeSource(events: SessionEvent[], wakes: WatchResult[]): EventLogSource & { reads: number } {
  const source = {
    reads: 0,
    read: async (_key: string, after: number, limit: number): Promise<ReadEventsResult> => {
      source.reads += 1
      return { events: events.filter(item => item.seq > after).slice(0, limit), count: events.length }
    },
    watch: async (_key: string, _after: number, _timeoutMs: number, signal: AbortSignal): Promise<WatchResult> => {
      const next = wakes.shift()
      if (next) return next
      await new Promise(resolve => signal.addEventListener('abort', resolve, { once: true }))
      return { count: null }
    },
  }
  return source
}

describe('session feeds', () => {
  it('serve the events a watch woke with, without reading the log', async () => {
    const log = [event(1), event(2)]
    const source = fakeSource(log, [{ count: 2, events: log }])
    const { feed, leave } = new SessionFeeds(source, 60_000).join('t1~s', () => undefined)
    await feed.waitBeyond(0, AbortSignal.timeout(5_000))
    expect(feed.eventsAfter(0, 10)).toEqual(log)
    expect(source.reads).toBe(0)
    leave()
  })

  it('read the log when the wake carries only the count, or events that do not start where the feed stands', async () => {
    const log = [event(1), event(2), event(3)]
    const source = fakeSource(log, [{ count: 1 }, { count: 3, events: [event(3)] }])
    const { feed, leave } = new SessionFeeds(source, 60_000).join('t1~s', () => undefined)
    await feed.waitBeyond(2, AbortSignal.timeout(5_000))
    expect(feed.eventsAfter(0, 10)).toEqual(log)
    expect(source.reads).toBe(2) // the count-only wake, and the wake whose event 3 leaves a gap after event 1
    leave()
  })
})

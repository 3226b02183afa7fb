import type { SessionEvent } from '../contract/session'
import { backoff, type EventLogSource, type SessionFeed, type SessionFeeds } from './session-feeds'

const PAGE_SIZE = 100

/** What {@link followEventLog} yields: a page of new events, or the moment the follower first has every event it missed. */
export type EventLogStep = { kind: 'events'; events: SessionEvent[] } | { kind: 'caught-up' }

/**
 * Follows the event log of session `key` from `after` until `signal` aborts: pages of the events it missed (read
 * itself), then new ones as the session's shared feed wakes it. While Restate fails it reports the error through
 * `onError` (once per outage) and retries with backoff; it never ends on an error.
 */
export async function* followEventLog(feeds: SessionFeeds, source: EventLogSource, key: string, after: number, signal: AbortSignal, onError: (error: unknown) => void): AsyncGenerator<EventLogStep> {
  let reported = false
  const report = (error: unknown): void => {
    if (reported) return
    reported = true
    onError(error)
  }
  const { feed, leave } = feeds.join(key, report)
  let cursor = after
  let failures = 0
  let caughtUp = false
  try {
    while (!signal.aborted) {
      let page: SessionEvent[]
      try {
        page = await nextPage(feed, source, key, cursor)
        failures = 0
        reported = false
      } catch (error) {
        report(error)
        await backoff(failures++, signal)
        continue
      }
      const fresh = page.filter(event => event.seq > cursor)
      if (fresh.length > 0) {
        cursor = fresh.at(-1)!.seq
        yield { kind: 'events', events: fresh }
      }
      if (page.length >= PAGE_SIZE) continue
      if (!caughtUp) yield { kind: 'caught-up' }
      caughtUp = true
      await feed.waitBeyond(cursor, signal)
    }
  } finally {
    leave()
  }
}

/** The events after `cursor`: from the feed's buffer when it reaches back that far, else read from Restate. */
async function nextPage(feed: SessionFeed, source: EventLogSource, key: string, cursor: number): Promise<SessionEvent[]> {
  const buffered = feed.eventsAfter(cursor, PAGE_SIZE)
  if (buffered && (buffered.length > 0 || feed.latest <= cursor)) return buffered
  const result = await source.read(key, cursor, PAGE_SIZE)
  feed.observe(result)
  return result.events
}

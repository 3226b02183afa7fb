/**
 * The durable names and shapes of the session event log: one `events` virtual object per session key
 * (`<tenant>~<sessionId>`, as the session's) holds the log; the `event_watch` service parks a viewer's wait on an
 * awakeable. These names are in every journal: never rename them.
 */

/** Name of the event-log virtual object. Durable: never rename. */
export const EVENTS_SERVICE = 'events'
/** Name of the service whose `wait` handler parks until the log grows. Durable: never rename. */
export const EVENT_WATCH_SERVICE = 'event_watch'
/** State key of the number of events in the log. Durable: never rename. */
export const EVENT_COUNT_STATE_KEY = 'event_count'
/** Prefix of the event pages: events `seq` 64·n+1 … 64·(n+1) live under `event_page_<n>`. Durable: never rename. */
export const EVENT_PAGE_STATE_KEY_PREFIX = 'event_page_'
/** State key of the awakeable ids waiting for the log to grow. Durable: never rename. */
export const EVENT_WAITERS_STATE_KEY = 'event_waiters'
/**
 * State key of the delivery cursors: for each source (the invocation that recorded the events), how many of its
 * events the log holds. `deliver` uses it to append each event once, whichever path brought it. Durable: never rename.
 */
export const EVENT_SOURCES_STATE_KEY = 'event_sources'
/** Events per page. Durable: pages already written use it. */
export const EVENT_PAGE_SIZE = 64

export type { NewSessionEvent, SessionEvent, SessionEventType } from 'zidane/session'
import type { NewSessionEvent, SessionEvent } from 'zidane/session'

/** Input of `events/<key>/append` (exclusive). */
export interface AppendEventsRequest { events: NewSessionEvent[] }

/**
 * Input of `events/<key>/deliver` (exclusive): events `from … from+events.length-1` of `source`, numbered by the
 * invocation that recorded them (0 is its first event). The log appends those it does not hold yet, in order.
 */
export interface DeliverEventsRequest {
  source: string
  from: number
  events: NewSessionEvent[]
  /**
   * Sent by the recording invocation's journal (certain, in order) rather than the courier: past the source's cursor
   * it is appended anyway, where a courier batch is dropped. The journaled sends of one invocation arrive in order, so
   * that happens only when the log no longer keeps the source's cursor (it keeps its latest 64 sources) and already
   * holds the events before it.
   */
  journaled?: boolean
}

/** Output of `events/<key>/deliver`: how many events of the source the log holds now (a gap appends nothing). */
export interface DeliverEventsResult { delivered: number }

/** Input of the shared `events/<key>/read`: events with `seq > after`, at most `limit` (default 100, at most 500). */
export interface ReadEventsRequest { after?: number; limit?: number }

/** Output of `events/<key>/read`: the events, and how many the log holds. */
export interface ReadEventsResult { events: SessionEvent[]; count: number }

/** Input of `events/<key>/subscribe` (exclusive): resolve `awakeableId` with the count once it passes `after`. */
export interface SubscribeRequest { awakeableId: string; after: number }

/** Input of `events/<key>/unsubscribe` (exclusive). */
export interface UnsubscribeRequest { awakeableId: string }

/** Input of `event_watch/wait`: wait until the log of `key` holds more than `after` events, at most `timeoutMs`. */
export interface WatchRequest { key: string; after: number; timeoutMs: number }

/** Output of `event_watch/wait`: the log's count, or `null` when the wait timed out. */
export interface WatchResult { count: number | null }

/** The session key of a sub-agent's root session: child sessions are named `<root key>:<label>[:<label>…]`. */
export function rootSessionKey(sessionId: string): string {
  return sessionId.split(':')[0] ?? sessionId
}

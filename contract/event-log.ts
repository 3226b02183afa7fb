/**
 * The durable names and shapes of the session event log: one `events` virtual object per session key
 * (`<tenant>~<sessionId>`, as the session's) holds the log, derived from the session's own state (its turns and run
 * records, read through the session's shared `changes` handler) and the batches its sub-agents append; the
 * `event_watch` service parks a viewer's wait on an awakeable. These names are in every journal: never rename them.
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
/** State key of where the log stands in the session's state (an {@link EventCursor}). Durable: never rename. */
export const EVENT_CURSOR_STATE_KEY = 'event_cursor'
/** State key of the durable time until which a viewer counts as following the log (set at each subscribe). Durable: never rename. */
export const EVENT_WATCHED_STATE_KEY = 'event_watched_until'
/** State key of where the latest top-level run starts in the log (a {@link LatestRunStart}). Durable: never rename. */
export const EVENT_LATEST_RUN_STATE_KEY = 'event_latest_run'
/** Events per page. Durable: pages already written use it. */
export const EVENT_PAGE_SIZE = 64

export type { NewSessionEvent, SessionEvent, SessionEventType } from 'zidane/session'
import type { NewSessionEvent, SessionEvent, SessionRun, SessionTurn } from 'zidane/session'

/** Input of `events/<key>/append` (exclusive): a batch of a sub-agent's events, appended as they are. */
export interface AppendEventsRequest { events: NewSessionEvent[] }

/**
 * Input of `events/<key>/sync` (exclusive): derive the events of the session's writes the log does not hold yet.
 * Sent one-way by the session's run (journaled, before it waits and at its end) and rung by the services' doorbell
 * (outside the journal) with the turns and runs the session held after the write it rings for: a sync that finds
 * fewer (the write is not readable yet) reads again. The doorbell adds the `cursor` its last sync of the log returned:
 * a sync asks the session for the changes past it while it reads its own cursor, and uses the answer only when the
 * two are the same (a hint, never trusted). The run's journaled sync says what the session held when it was sent and
 * is `journaled`: those writes are readable when it is processed, and it syncs whether or not a viewer follows the log
 * (it is the certain path), reading the session in one call when the counts say how much is new.
 */
export interface SyncEventsRequest { turns?: number; runs?: number; cursor?: EventCursor; journaled?: boolean }

/**
 * Output of `events/<key>/sync`: how many events the log holds, and whether a viewer follows it (one waits, or one
 * subscribed within the last {@link WATCHED_FOR_MS}). The doorbell rings a log nobody follows seldom. A sync that read
 * the session says where the log now stands (`cursor`).
 */
export interface SyncEventsResult { count: number; watched: boolean; cursor?: EventCursor }

/** How long after its last subscribe a log counts as followed: longer than a gateway's longest watch (4 min). */
export const WATCHED_FOR_MS = 5 * 60_000

/**
 * Where the log stands in the session's state: the turns and run records it derived, the top-level runs it saw start
 * and not end, and the first turn it must read again (an assistant turn whose calls are not all closed).
 */
export interface EventCursor { turns: number; runs: number; open: number[]; from: number }

/**
 * Input of the session's shared `session/<key>/changes`: at most `runs` run records from `runsFrom`, then the turns
 * from `turnsFrom` (the log reads again those before `newFrom`, which hold calls still open) and at most `turns` past
 * `newFrom`.
 */
export interface SessionChangesRequest { runsFrom: number; runs: number; turnsFrom: number; newFrom: number; turns: number }

/**
 * Output of `session/<key>/changes`: the run records and turns asked for that exist (each range ends at its first
 * missing key; `moreTurns` when it ended at the size asked for instead), then the header's counts, read with the turns.
 * The run records are read before the turns: a run read as ended wrote all its turns before the turns were read.
 */
export interface SessionChanges {
  runsFrom: number
  runs: SessionRun[]
  turns: SessionTurn[]
  moreTurns: boolean
  turnCount: number
  runCount: number
}

/**
 * Output of the shared `events/<key>/latestRun`: the latest top-level `run:start` the log appended (its run id and
 * `seq`) and whether that run's `run:end` followed; null for a log without one (or written before this was kept).
 */
export interface LatestRunStart { runId: string; startSeq: number; ended: boolean }

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

/**
 * Output of `event_watch/wait`: the log's count, or `null` when the wait timed out. `events`, when present, are the
 * events that woke it (those after the `after` it waited past, up to `count`): a viewer needs no `read` for them.
 */
export interface WatchResult { count: number | null; events?: SessionEvent[] }

/** What the log resolves a parked watch's awakeable with: the new count, or the count and the events it appended. */
export type WatchWake = number | { count: number; events: SessionEvent[] }

/** The session key of a sub-agent's root session: child sessions are named `<root key>:<label>[:<label>…]`. */
export function rootSessionKey(sessionId: string): string {
  return sessionId.split(':')[0] ?? sessionId
}

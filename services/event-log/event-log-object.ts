import * as restate from '@restatedev/restate-sdk'
import { SESSION_SERVICE } from '../../contract/session'
import type { SessionObject } from '../agent-object/session-object'
import type { AppendEventsRequest, EventCursor, LatestRunStart, NewSessionEvent, ReadEventsRequest, ReadEventsResult, SessionChanges, SessionEvent, SubscribeRequest, SyncEventsRequest, SyncEventsResult, UnsubscribeRequest, WatchRequest, WatchResult, WatchWake } from '../../contract/event-log'
import {
  EVENT_COUNT_STATE_KEY, EVENT_CURSOR_STATE_KEY, EVENT_LATEST_RUN_STATE_KEY, EVENT_PAGE_SIZE, EVENT_PAGE_STATE_KEY_PREFIX, EVENT_WAITERS_STATE_KEY, EVENT_WATCH_SERVICE, EVENT_WATCHED_STATE_KEY, EVENTS_SERVICE, WATCHED_FOR_MS,
} from '../../contract/event-log'
import { deriveEvents, EMPTY_CURSOR, firstRunToRead } from './derive-events'
import { readState } from '../read-state'

/** Most events one `read` returns. */
export const MAX_READ_LIMIT = 500
/** Most viewers' waits one log keeps; the oldest is woken (it reads nothing new and waits again) past it. */
const MAX_WAITERS = 1_000
/** Most parked watches woken with the events themselves (one per gateway following the session is the usual case). */
const WAKE_WITH_EVENTS_MAX_WAITERS = 8
/** Largest JSON of the events a wake carries: past it, the viewers read them. */
const WAKE_WITH_EVENTS_MAX_CHARS = 32 * 1024

/** A log read, a watch and a subscription are not worth keeping once answered: no retained invocations pile up. */
const unretained = { journalRetention: 0, idempotencyRetention: 0 }
/**
 * The log's handlers read a few keys of a state that grows with the session: lazy state fetches those keys only
 * (eager state would ship every page to each append).
 */
const logHandler = { ...unretained, enableLazyState: true }

function pageKey(page: number): string {
  return `${EVENT_PAGE_STATE_KEY_PREFIX}${page}`
}

/**
 * What a handler that appends needs of the log, read in one round trip: the count, the waiting viewers and, when
 * already read, the last page as stored (`tail`) and where the latest run starts (`latest`, null when none).
 */
interface LogHead { count: number; waiters: string[]; tail?: PromiseLike<SessionEvent[] | null>; latest?: LatestRunStart | null }

/** Appends a sub-agent's batch of events in order (a journaled one-way send of its outbox). */
async function append(ctx: restate.ObjectContext, request: AppendEventsRequest): Promise<number> {
  const [count, waiters] = await readState(ctx, [EVENT_COUNT_STATE_KEY, EVENT_WAITERS_STATE_KEY])
  return appendToLog(ctx, request.events, { count: (count as number | null) ?? 0, waiters: (waiters as string[] | null) ?? [] })
}

/** New turns and run records one `changes` call asks for when nothing says how many there are (a journaled sync). */
const DEFAULT_READ = 16
/** Most new turns one `changes` call asks for. */
const MAX_READ = 100
/** Reads of the session one sync makes at most (pages, and reads again of a state a write was landing in). */
const MAX_SYNC_READS = 20
/** Pause before reading again a state that is behind the doorbell's counts (its write is not readable yet). */
const BEHIND_PAUSE_MS = 5

/**
 * Brings the log up to the session's state: reads what changed since the cursor through the session's shared
 * `changes` handler, page by page, derives its events ({@link deriveEvents}) and appends them. A doorbell's sync whose
 * read is behind the counts it was rung with (the write is not readable yet) pauses and reads again; one for a log no
 * viewer follows reads nothing and says so. A rung sync that carries the cursor the doorbell's last sync returned asks
 * the session for the changes past it while it reads its own, and uses that answer only when the two cursors are the
 * same. Idempotent: a sync that finds nothing new appends nothing, so any number of them (journaled by the runs, rung
 * by the doorbell) leave one log.
 */
function syncFrom(sessionService: string): (ctx: restate.ObjectContext, request: SyncEventsRequest | null) => Promise<SyncEventsResult> {
  const Session = { name: sessionService } as SessionObject
  return async (ctx, request) => {
    // Rung by the doorbell: counts, and no journal behind them (the run's journaled sync says it is `journaled`).
    const rung = request?.journaled !== true && (request?.turns !== undefined || request?.runs !== undefined)
    const heldAt = (cursor: EventCursor): Held => ({ turns: request?.turns ?? cursor.turns + DEFAULT_READ, runs: request?.runs ?? cursor.runs + DEFAULT_READ })
    // The doorbell's cursor is where its last sync left the log: the session is asked beside the log's own read.
    const hint = rung ? request?.cursor : undefined
    const early = hint ? askChanges(ctx, Session, hint, heldAt(hint)) : undefined
    const [storedCursor, storedCount, storedWaiters, watchedUntil, latest] = await readState(ctx, [EVENT_CURSOR_STATE_KEY, EVENT_COUNT_STATE_KEY, EVENT_WAITERS_STATE_KEY, EVENT_WATCHED_STATE_KEY, EVENT_LATEST_RUN_STATE_KEY])
    const head: LogHead = { count: (storedCount as number | null) ?? 0, waiters: (storedWaiters as string[] | null) ?? [], latest: (latest as LatestRunStart | null) ?? null }
    const watched = head.waiters.length > 0 || (await ctx.date.now()) < ((watchedUntil as number | null) ?? 0)
    // The doorbell only hurries the log for its viewers: without one, the run's journaled syncs bring the events.
    if (rung && !watched) return { count: head.count, watched }
    let cursor = (storedCursor as EventCursor | null) ?? EMPTY_CURSOR
    // Queued behind a sync that read past its counts (a session's quick runs queue one each): nothing to ask the session.
    if (covers(cursor, request)) return { count: head.count, watched, cursor }
    // A rung sync has events to append: its last page is read beside the session's changes, not after them.
    if (rung) head.tail = tailPage(ctx, head.count)
    const start = cursor
    // What the session holds, as far as this sync knows: the doorbell's counts, then the header's at each read.
    let held = heldAt(cursor)
    for (let reads = 1; reads <= MAX_SYNC_READS; reads++) {
      const changes: SessionChanges = await (reads === 1 && early && hint && sameCursor(hint, cursor) ? early : askChanges(ctx, Session, cursor, held))
      const derived = deriveEvents(cursor, changes)
      if (derived.events.length > 0) await appendToLog(ctx, derived.events, head)
      cursor = derived.cursor
      // Only a rung sync can be behind: a journaled one is processed after the writes it counts.
      const behind = rung && (changes.turnCount < (request?.turns ?? 0) || changes.runCount < (request?.runs ?? 0))
      if (!behind && cursor.turns >= changes.turnCount && cursor.runs >= changes.runCount) break // a later write's ring brings what follows
      held = { turns: Math.max(changes.turnCount, request?.turns ?? 0), runs: Math.max(changes.runCount, request?.runs ?? 0) }
      if (behind) await ctx.sleep(BEHIND_PAUSE_MS)
    }
    if (!sameCursor(cursor, start)) ctx.set(EVENT_CURSOR_STATE_KEY, cursor)
    return { count: head.count, watched, cursor }
  }
}

/** What the session holds as far as a sync knows: its turns and run records. */
interface Held { turns: number; runs: number }

/** Calls the session's shared `changes` for what lies past `cursor`, up to what it holds (`held`). */
function askChanges(ctx: restate.ObjectContext, Session: SessionObject, cursor: EventCursor, held: Held): restate.RestatePromise<SessionChanges> {
  const runsFrom = firstRunToRead(cursor)
  return ctx.objectClient(Session, ctx.key).changes({ runsFrom, runs: Math.max(1, held.runs - runsFrom), turnsFrom: cursor.from, newFrom: cursor.turns, turns: Math.min(MAX_READ, Math.max(1, held.turns - cursor.turns)) })
}

/**
 * Whether the log derived all that a sync's counts say the session held: as many turns and run records or more, with
 * no run it saw start left open and no call left unanswered (an open run's record and such a turn can still change).
 */
function covers(cursor: EventCursor, request: SyncEventsRequest | null): boolean {
  if (request?.turns === undefined || request.runs === undefined) return false
  return cursor.open.length === 0 && cursor.from >= cursor.turns && cursor.turns >= request.turns && cursor.runs >= request.runs
}

/** Whether two cursors stand at the same place. */
function sameCursor(left: EventCursor, right: EventCursor): boolean {
  return left.turns === right.turns && left.runs === right.runs && left.from === right.from && left.open.length === right.open.length && left.open.every((index, at) => right.open[at] === index)
}

/** Reads the page the next event of a log of `count` events goes to (issued now, awaited by the append). */
function tailPage(ctx: restate.ObjectContext, count: number): restate.RestatePromise<SessionEvent[] | null> {
  return ctx.get<SessionEvent[]>(pageKey(Math.floor(count / EVENT_PAGE_SIZE))) as unknown as restate.RestatePromise<SessionEvent[] | null>
}

/**
 * Appends events in order after `head.count`, numbering them, then wakes the viewers of `head.waiters` with the new
 * count; `head` is left as the log now is.
 */
async function appendToLog(ctx: restate.ObjectContext, fresh: readonly NewSessionEvent[], head: LogHead): Promise<number> {
  if (fresh.length === 0) return head.count
  let count = head.count
  let page = Math.floor(count / EVENT_PAGE_SIZE)
  let events = (await (head.tail ?? tailPage(ctx, count))) ?? []
  for (const event of fresh) {
    events.push({ ...event, seq: ++count })
    if (events.length < EVENT_PAGE_SIZE) continue
    ctx.set(pageKey(page), events)
    page += 1
    events = []
  }
  if (events.length > 0) ctx.set(pageKey(page), events)
  await noteLatestRun(ctx, fresh, head)
  ctx.set(EVENT_COUNT_STATE_KEY, count)
  const wake = wakeWith(head, count, events)
  for (const awakeableId of head.waiters) ctx.resolveAwakeable<WatchWake>(awakeableId, wake)
  if (head.waiters.length > 0) ctx.clear(EVENT_WAITERS_STATE_KEY)
  Object.assign(head, { count, waiters: [], tail: Promise.resolve(events) })
  return count
}

/**
 * What the viewers of `head.waiters` are woken with: the appended events themselves when few viewers wait and the
 * events are small (each wake is a journal entry carrying them), else the count alone (they read the events). Every
 * waiter waited past the count before the append (a subscription past it is woken at once), so the events after it
 * are what each needs. `tail` is the last page after the append, which holds the new events when they fit in it.
 */
function wakeWith(head: LogHead, count: number, tail: readonly SessionEvent[]): WatchWake {
  const appended = tail.filter(event => event.seq > head.count)
  if (head.waiters.length > WAKE_WITH_EVENTS_MAX_WAITERS || appended.length !== count - head.count) return count
  return JSON.stringify(appended).length <= WAKE_WITH_EVENTS_MAX_CHARS ? { count, events: appended } : count
}

/**
 * Keeps where the latest top-level run starts (appended as `fresh` after `head.count` events), so a protocol view finds
 * the run it replays in one read, however long the log. Read (unless `head` holds it) only when a batch holds a
 * top-level run's start or end.
 */
async function noteLatestRun(ctx: restate.ObjectContext, fresh: readonly NewSessionEvent[], head: LogHead): Promise<void> {
  const topLevel = (event: NewSessionEvent): boolean => event.data.label === undefined && (event.type === 'run:start' || event.type === 'run:end')
  if (!fresh.some(topLevel)) return
  const appendedAfter = head.count
  let latest = head.latest !== undefined ? head.latest : await ctx.get<LatestRunStart>(EVENT_LATEST_RUN_STATE_KEY)
  fresh.forEach((event, index) => {
    if (!topLevel(event)) return
    const runId = String(event.data.runId)
    if (event.type === 'run:start') latest = { runId, startSeq: appendedAfter + index + 1, ended: false }
    else if (latest?.runId === runId) latest = { ...latest, ended: true }
  })
  if (latest) ctx.set(EVENT_LATEST_RUN_STATE_KEY, latest)
  head.latest = latest ?? null
}

/** The latest top-level run's start, as {@link noteLatestRun} keeps it. */
async function latestRun(ctx: restate.ObjectSharedContext): Promise<LatestRunStart | null> {
  return (await ctx.get<LatestRunStart>(EVENT_LATEST_RUN_STATE_KEY)) ?? null
}

/**
 * Events with `seq > after`, read page by page: a range costs its pages, not the whole log. The page holding `after`'s
 * successor is read with the count, in one round trip: a viewer that keeps up reads what is new in one.
 */
async function read(ctx: restate.ObjectSharedContext, request: ReadEventsRequest | null): Promise<ReadEventsResult> {
  const after = Math.max(0, Math.floor(request?.after ?? 0))
  const limit = Math.min(MAX_READ_LIMIT, Math.max(1, Math.floor(request?.limit ?? 100)))
  const first = Math.floor(after / EVENT_PAGE_SIZE)
  const [storedCount, firstPage] = await readState(ctx, [EVENT_COUNT_STATE_KEY, pageKey(first)])
  const count = (storedCount as number | null) ?? 0
  const last = Math.min(count, after + limit)
  const events: SessionEvent[] = []
  for (let page = first; page * EVENT_PAGE_SIZE < last; page++) {
    const stored = page === first ? firstPage as SessionEvent[] | null : await ctx.get<SessionEvent[]>(pageKey(page))
    for (const event of stored ?? []) if (event.seq > after && event.seq <= last) events.push(event)
  }
  return { events, count }
}

/**
 * Wakes `awakeableId` at once when the log already passed `after`, else when the next events arrive. A log nobody
 * followed turned the doorbell's rings away, so its session may hold writes it never read: the first subscription
 * after such a spell sends the log a sync (a run in a long model call writes nothing that would ring again).
 */
async function subscribe(ctx: restate.ObjectContext, request: SubscribeRequest): Promise<void> {
  // The clock and the log's head in one round trip: a sync waits behind this handler's lock.
  const clock = ctx.date.now() as unknown as restate.RestatePromise<number>
  const [now, [storedCount, storedWaiters, watchedUntil]] = await restate.RestatePromise.all([clock, readState(ctx, [EVENT_COUNT_STATE_KEY, EVENT_WAITERS_STATE_KEY, EVENT_WATCHED_STATE_KEY])])
  ctx.set(EVENT_WATCHED_STATE_KEY, now + WATCHED_FOR_MS)
  const waiters = (storedWaiters as string[] | null) ?? []
  if (waiters.length === 0 && now >= ((watchedUntil as number | null) ?? 0)) ctx.objectSendClient(EventLog, ctx.key).sync({})
  const count = (storedCount as number | null) ?? 0
  if (count > request.after) return ctx.resolveAwakeable(request.awakeableId, count)
  waiters.push(request.awakeableId)
  for (const dropped of waiters.splice(0, Math.max(0, waiters.length - MAX_WAITERS))) ctx.resolveAwakeable(dropped, count)
  ctx.set(EVENT_WAITERS_STATE_KEY, waiters)
}

/**
 * Forgets a viewer's wait (its watch timed out). When the last one leaves a log that holds no event (a session that
 * does not exist yet, or an id a tenant made up), the log keeps nothing: watching an id costs no state once the watch
 * ends, however many ids are watched. Its next viewer subscribes again.
 */
async function unsubscribe(ctx: restate.ObjectContext, request: UnsubscribeRequest): Promise<void> {
  const [storedWaiters, count] = await readState(ctx, [EVENT_WAITERS_STATE_KEY, EVENT_COUNT_STATE_KEY])
  const waiters = (storedWaiters as string[] | null) ?? []
  const left = waiters.filter(id => id !== request.awakeableId)
  if (left.length === 0 && count === null) return ctx.clearAll()
  if (left.length === waiters.length) return
  if (left.length === 0) ctx.clear(EVENT_WAITERS_STATE_KEY)
  else ctx.set(EVENT_WAITERS_STATE_KEY, left)
}

/**
 * Erases the log of a session being deleted (its `erase`): its waiting viewers are woken with a count of 0 (the log
 * starts again from nothing), then every key is cleared.
 */
async function erase(ctx: restate.ObjectContext): Promise<void> {
  for (const awakeableId of (await ctx.get<string[]>(EVENT_WAITERS_STATE_KEY)) ?? []) ctx.resolveAwakeable(awakeableId, 0)
  ctx.clearAll()
}

/**
 * The session event log of the sessions of `sessionService` (the deployment's `session`; the bench's own object): one
 * virtual object per session key. `sync` (exclusive) derives the events of the session's writes from its state,
 * `append` (exclusive) takes the batches its sub-agents journal at their turn boundaries (see `event-outbox.ts`),
 * `read` (shared) serves ranges, `subscribe`/`unsubscribe` (exclusive) manage the awakeables of waiting viewers, `erase` (exclusive) empties it for the session's deletion. Its
 * lock is not the session's: it reads the session and takes sub-agents' batches while the session's run holds that.
 */
export function eventLogObjectFor(sessionService: string) {
  return restate.object({
    name: EVENTS_SERVICE,
    handlers: {
      append: restate.handlers.object.exclusive(logHandler, append),
      sync: restate.handlers.object.exclusive(logHandler, syncFrom(sessionService)),
      read: restate.handlers.object.shared(logHandler, read),
      latestRun: restate.handlers.object.shared(logHandler, latestRun),
      subscribe: restate.handlers.object.exclusive(logHandler, subscribe),
      unsubscribe: restate.handlers.object.exclusive(logHandler, unsubscribe),
      erase: restate.handlers.object.exclusive(logHandler, erase),
    },
  })
}

/** The deployment's event log, over the `session` object. */
export const eventLogObject = eventLogObjectFor(SESSION_SERVICE)

/** The event-log object's type, for typed clients. */
export type EventLogObject = typeof eventLogObject
const EventLog: EventLogObject = { name: EVENTS_SERVICE }

/**
 * Parks until the log of `key` holds more than `after` events, or `timeoutMs` passes: an awakeable the log resolves
 * on its next append. While it waits the invocation is suspended in Restate: an idle viewer costs no process and no
 * invocation per poll.
 */
async function wait(ctx: restate.Context, request: WatchRequest): Promise<WatchResult> {
  const { id, promise } = ctx.awakeable<WatchWake>()
  ctx.objectSendClient(EventLog, request.key).subscribe({ awakeableId: id, after: request.after })
  try {
    const wake = await promise.orTimeout(request.timeoutMs)
    return typeof wake === 'number' ? { count: wake } : { count: wake.count, events: wake.events }
  } catch (error) {
    if (!(error instanceof restate.TimeoutError)) throw error
    ctx.objectSendClient(EventLog, request.key).unsubscribe({ awakeableId: id })
    return { count: null }
  }
}

/** The watch service: one parked `wait` per session a gateway follows (shared by all of that gateway's viewers). */
export const eventWatchService = restate.service({
  name: EVENT_WATCH_SERVICE,
  handlers: { wait: restate.handlers.handler(unretained, wait) },
})

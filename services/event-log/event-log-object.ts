import * as restate from '@restatedev/restate-sdk'
import type { AppendEventsRequest, DeliverEventsRequest, DeliverEventsResult, NewSessionEvent, ReadEventsRequest, ReadEventsResult, SessionEvent, SubscribeRequest, UnsubscribeRequest, WatchRequest, WatchResult } from './event-log-contract'
import {
  EVENT_COUNT_STATE_KEY, EVENT_PAGE_SIZE, EVENT_PAGE_STATE_KEY_PREFIX, EVENT_SOURCES_STATE_KEY, EVENT_WAITERS_STATE_KEY, EVENT_WATCH_SERVICE, EVENTS_SERVICE,
} from './event-log-contract'

/** Most events one `read` returns. */
export const MAX_READ_LIMIT = 500
/** Most viewers' waits one log keeps; the oldest is woken (it reads nothing new and waits again) past it. */
const MAX_WAITERS = 1_000

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

/** Most sources whose delivery cursor the log keeps: the oldest are invocations that ended long ago. */
const MAX_SOURCES = 64

/** Appends events in order (unconditionally: the one-way appends of runs recorded before `deliver` existed). */
async function append(ctx: restate.ObjectContext, request: AppendEventsRequest): Promise<number> {
  return appendToLog(ctx, request.events)
}

/**
 * Appends the events of `request.source` the log does not hold yet. Two paths bring the same events: the services'
 * courier (fast, outside the journal, possibly twice after a crash) and the recording invocation's journaled one-way
 * sends (certain). The source's cursor makes each event land once and in its order; a courier batch that starts
 * past the cursor (after a lost one) appends nothing: the journaled send that covers it follows. The log keeps the
 * cursors of its latest 64 sources.
 */
async function deliver(ctx: restate.ObjectContext, request: DeliverEventsRequest): Promise<DeliverEventsResult> {
  const sources = (await ctx.get<Record<string, number>>(EVENT_SOURCES_STATE_KEY)) ?? {}
  const held = sources[request.source] ?? 0
  const end = request.from + request.events.length
  if (end <= held || (request.from > held && request.journaled !== true)) return { delivered: held }
  await appendToLog(ctx, request.events.slice(Math.max(0, held - request.from)))
  delete sources[request.source] // re-inserted last: the cursors stay in the order of their latest delivery
  sources[request.source] = end
  const names = Object.keys(sources)
  for (const stale of names.slice(0, Math.max(0, names.length - MAX_SOURCES))) delete sources[stale]
  ctx.set(EVENT_SOURCES_STATE_KEY, sources)
  return { delivered: end }
}

/** Appends events in order, numbering them, then wakes every waiting viewer with the new count. */
async function appendToLog(ctx: restate.ObjectContext, fresh: readonly NewSessionEvent[]): Promise<number> {
  let count = (await ctx.get<number>(EVENT_COUNT_STATE_KEY)) ?? 0
  if (fresh.length === 0) return count
  let page = Math.floor(count / EVENT_PAGE_SIZE)
  let events = (await ctx.get<SessionEvent[]>(pageKey(page))) ?? []
  for (const event of fresh) {
    events.push({ ...event, seq: ++count })
    if (events.length < EVENT_PAGE_SIZE) continue
    ctx.set(pageKey(page), events)
    page += 1
    events = []
  }
  if (events.length > 0) ctx.set(pageKey(page), events)
  ctx.set(EVENT_COUNT_STATE_KEY, count)
  const waiters = (await ctx.get<string[]>(EVENT_WAITERS_STATE_KEY)) ?? []
  for (const awakeableId of waiters) ctx.resolveAwakeable(awakeableId, count)
  if (waiters.length > 0) ctx.clear(EVENT_WAITERS_STATE_KEY)
  return count
}

/** Events with `seq > after`, read page by page: a range costs its pages, not the whole log. */
async function read(ctx: restate.ObjectSharedContext, request: ReadEventsRequest | null): Promise<ReadEventsResult> {
  const count = (await ctx.get<number>(EVENT_COUNT_STATE_KEY)) ?? 0
  const after = Math.max(0, Math.floor(request?.after ?? 0))
  const limit = Math.min(MAX_READ_LIMIT, Math.max(1, Math.floor(request?.limit ?? 100)))
  const last = Math.min(count, after + limit)
  const events: SessionEvent[] = []
  for (let page = Math.floor(after / EVENT_PAGE_SIZE); page * EVENT_PAGE_SIZE < last; page++) {
    for (const event of (await ctx.get<SessionEvent[]>(pageKey(page))) ?? []) if (event.seq > after && event.seq <= last) events.push(event)
  }
  return { events, count }
}

/** Wakes `awakeableId` at once when the log already passed `after`, else when the next events arrive. */
async function subscribe(ctx: restate.ObjectContext, request: SubscribeRequest): Promise<void> {
  const count = (await ctx.get<number>(EVENT_COUNT_STATE_KEY)) ?? 0
  if (count > request.after) return ctx.resolveAwakeable(request.awakeableId, count)
  const waiters = (await ctx.get<string[]>(EVENT_WAITERS_STATE_KEY)) ?? []
  waiters.push(request.awakeableId)
  for (const dropped of waiters.splice(0, Math.max(0, waiters.length - MAX_WAITERS))) ctx.resolveAwakeable(dropped, count)
  ctx.set(EVENT_WAITERS_STATE_KEY, waiters)
}

async function unsubscribe(ctx: restate.ObjectContext, request: UnsubscribeRequest): Promise<void> {
  const waiters = (await ctx.get<string[]>(EVENT_WAITERS_STATE_KEY)) ?? []
  const left = waiters.filter(id => id !== request.awakeableId)
  if (left.length === waiters.length) return
  if (left.length === 0) ctx.clear(EVENT_WAITERS_STATE_KEY)
  else ctx.set(EVENT_WAITERS_STATE_KEY, left)
}

/**
 * The session event log: one virtual object per session key. `deliver` (exclusive) brings the numbered events of
 * the session's runs (see `event-outbox.ts`), `append` those recorded one write at a time (sub-agents, steering runs,
 * runs created before the outbox), `read` (shared) serves ranges, `subscribe`/`unsubscribe` (exclusive) manage the
 * awakeables of waiting viewers. Its lock is not the session's: sub-agents append while the session's run holds that.
 */
export const eventLogObject = restate.object({
  name: EVENTS_SERVICE,
  handlers: {
    append: restate.handlers.object.exclusive(logHandler, append),
    deliver: restate.handlers.object.exclusive(logHandler, deliver),
    read: restate.handlers.object.shared(logHandler, read),
    subscribe: restate.handlers.object.exclusive(logHandler, subscribe),
    unsubscribe: restate.handlers.object.exclusive(logHandler, unsubscribe),
  },
})

/** The event-log object's type, for typed clients. */
export type EventLogObject = typeof eventLogObject
const EventLog: EventLogObject = { name: EVENTS_SERVICE }

/**
 * Parks until the log of `key` holds more than `after` events, or `timeoutMs` passes: an awakeable the log resolves
 * on its next append. While it waits the invocation is suspended in Restate: an idle viewer costs no process and no
 * invocation per poll.
 */
async function wait(ctx: restate.Context, request: WatchRequest): Promise<WatchResult> {
  const { id, promise } = ctx.awakeable<number>()
  ctx.objectSendClient(EventLog, request.key).subscribe({ awakeableId: id, after: request.after })
  try {
    return { count: await promise.orTimeout(request.timeoutMs) }
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

import * as restate from '@restatedev/restate-sdk'
import type { AddMessageRequest, InboxMessage, TakeMessagesRequest, WatchInboxRequest } from '../../contract/session'
import { INBOX_SERVICE, INBOX_WATCHER_STATE_KEY, SESSION_SERVICE } from '../../contract/session'
import type { SessionObject } from '../agent-object/session-object'

/** State key of the messages waiting for a run. Durable: never rename. */
export const INBOX_MESSAGES_KEY = 'messages'
/** State key set while a `session/<key>/deliver` is on its way and has not taken the messages yet. Durable: never rename. */
export const DELIVERY_SCHEDULED_KEY = 'delivery_scheduled'

const Session: SessionObject = { name: SESSION_SERVICE }

/**
 * Saves a steered message and makes sure a `deliver` of the session follows it. `deliver` is exclusive on the session,
 * so it runs after the current run (if any): a message the run took at a turn boundary leaves it nothing to do, and a
 * message that arrived after the run's last boundary (or while no run ran) becomes its prompt. One `deliver` covers
 * every message saved before it takes them.
 */
async function add(ctx: restate.ObjectContext, request: AddMessageRequest): Promise<{ id: string }> {
  const id = ctx.request().id
  const waiting = (await ctx.get<InboxMessage[]>(INBOX_MESSAGES_KEY)) ?? []
  ctx.set(INBOX_MESSAGES_KEY, [...waiting, { id, text: request.text, receivedAt: await ctx.date.now() }])
  const watcher = await ctx.get<string>(INBOX_WATCHER_STATE_KEY)
  if (watcher !== null) {
    ctx.resolveAwakeable(watcher, null)
    ctx.clear(INBOX_WATCHER_STATE_KEY)
  }
  if (!(await ctx.get<boolean>(DELIVERY_SCHEDULED_KEY))) {
    ctx.objectSendClient(Session, ctx.key).deliver()
    ctx.set(DELIVERY_SCHEDULED_KEY, true)
  }
  return { id }
}

/**
 * Arms a running run's signal: resolves its awakeable at once when a message is waiting, else at the next `add`. A
 * newer watch replaces an older one (the run that armed it has moved on or ended).
 */
async function watch(ctx: restate.ObjectContext, request: WatchInboxRequest): Promise<void> {
  const waiting = (await ctx.get<InboxMessage[]>(INBOX_MESSAGES_KEY)) ?? []
  if (waiting.length > 0) ctx.resolveAwakeable(request.awakeableId, null)
  else ctx.set(INBOX_WATCHER_STATE_KEY, request.awakeableId)
}

/** Hands every waiting message to the caller (the session's run at a turn boundary, or its `deliver`) and forgets them. */
async function take(ctx: restate.ObjectContext, request: TakeMessagesRequest | null): Promise<InboxMessage[]> {
  if (request?.forDelivery === true) ctx.clear(DELIVERY_SCHEDULED_KEY)
  const waiting = (await ctx.get<InboxMessage[]>(INBOX_MESSAGES_KEY)) ?? []
  if (waiting.length > 0) ctx.clear(INBOX_MESSAGES_KEY)
  return waiting
}

/**
 * The steering inbox: one virtual object per session key. It lives beside the session object because the session is
 * locked by its running invocation for the whole run; the inbox's own lock is held only for a state update, so a
 * message is saved at once; the running run learns of it through the awakeable it armed with `watch` and takes it with a
 * journaled call (`take`) at its next turn boundary. Handler
 * names and state keys are durable: add, never rename.
 */
export const inboxObject = restate.object({
  name: INBOX_SERVICE,
  handlers: {
    add,
    take,
    watch,
    /** Forgets everything of a session being erased (its `erase`), the waiting messages included. */
    erase: async (ctx: restate.ObjectContext): Promise<void> => { ctx.clearAll() },
    pending: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<InboxMessage[]> => (await ctx.get<InboxMessage[]>(INBOX_MESSAGES_KEY)) ?? []),
  },
})

/** The inbox's type, for typed clients. */
export type InboxObject = typeof inboxObject

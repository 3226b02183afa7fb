import * as restate from '@restatedev/restate-sdk'
import { sessionIndexInterface, sessionInterface } from '../../contract/interfaces'
import type { SessionIndexExpireRequest, SessionIndexListRequest, SessionIndexPage, SessionIndexRemoveRequest, SessionIndexUpdate } from '../../contract/session-index'
import { sessionKeyOf } from './index-keys'
import type { IndexState } from './index-pages'
import { listEntries, readEntry, removeEntry, updateEntry } from './index-pages'

/** What the index is built with: how long a session may stay idle before it is deleted (none: kept for ever). */
export interface SessionIndexOptions {
  /** `ZIDANE_SESSION_RETENTION_DAYS` in ms; undefined keeps every session. */
  retentionMs: number | undefined
}

/** The context as the pages' {@link IndexState}: every read and write is a journaled state command. */
function contextState(ctx: restate.ObjectContext): IndexState {
  return { get: key => ctx.get(key), set: (key, value) => ctx.set(key, value), clear: key => ctx.clear(key) }
}

/**
 * `update` (exclusive): moves or changes the session's entry; when the session ended a run and a retention is set,
 * sends itself a check of the entry's new position after the retention (`expire`), a Restate delayed call.
 */
async function update(ctx: restate.ObjectContext, request: SessionIndexUpdate, options: SessionIndexOptions): Promise<void> {
  const entry = await updateEntry(contextState(ctx), request)
  if (options.retentionMs === undefined || request.lastActivityAt === undefined || entry.status === 'running') return
  ctx.sendClient(sessionIndexInterface, ctx.key).expire({ id: entry.id, seq: entry.seq, idleSince: request.lastActivityAt }, restate.rpc.sendOpts({ delay: options.retentionMs }))
}

/**
 * `expire` (exclusive): the session had no activity since the check was sent when its entry is still at `seq` (every
 * activity moves it) and not running; then its erase is sent, which checks again on the session itself.
 */
async function expire(ctx: restate.ObjectContext, request: SessionIndexExpireRequest): Promise<void> {
  const entry = await readEntry(contextState(ctx), request.id)
  if (entry?.seq !== request.seq || entry.status === 'running') return
  ctx.sendClient(sessionInterface, sessionKeyOf(ctx.key, request.id)).erase({ idleSince: request.idleSince ?? entry.lastActivityAt })
}

/** Most entries one `list` returns. */
export const MAX_LIST_LIMIT = 200

async function list(ctx: restate.ObjectSharedContext, request: SessionIndexListRequest): Promise<SessionIndexPage> {
  const limit = Math.min(MAX_LIST_LIMIT, Math.max(1, Math.floor(request.limit)))
  return listEntries({ get: key => ctx.get(key) }, { ...request, limit })
}

/**
 * The session index of a tenant (`session_index/<tenant>`, see `contract/session-index.ts` and
 * docs/design/session-index.md): entries in pages of state keys, read lazily, so an update costs a few small keys
 * whatever the tenant's number of sessions. A list is not worth keeping once answered.
 */
export function sessionIndexObject(options: SessionIndexOptions) {
  return restate.implement(sessionIndexInterface, {
    handlers: {
      update: async (ctx: restate.ObjectContext, request: SessionIndexUpdate) => update(ctx, request, options),
      list: restate.handlers.object.shared({ journalRetention: 0, idempotencyRetention: 0 }, list),
      remove: async (ctx: restate.ObjectContext, request: SessionIndexRemoveRequest) => { await removeEntry(contextState(ctx), request.id) },
      expire,
    },
    options: { enableLazyState: true, journalRetention: 0 },
  })
}

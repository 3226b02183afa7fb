import { SessionError } from '../errors/zidane-error'
import { appendNewTurns } from '../session/memory-session-store'
import type { SessionClock } from '../session/session'
import { SESSION_SCHEMA_VERSION } from '../session/types'
import type { SessionData, SessionMeta, SessionStatus, SessionStore, SessionTurn } from '../session/types'
import type { RestateObjectContextLike } from './types'

/** State key of the session header (`SessionMeta`). Durable name: never rename. */
export const SESSION_STATE_KEY = 'zidane_session'
/** State key of the session turns (`SessionTurn[]`). Durable name: never rename. */
export const SESSION_TURNS_STATE_KEY = 'zidane_turns'
/** State key older deployments kept the turns under (a bare `SessionTurn[]`); read, never written. */
export const LEGACY_SESSION_TURNS_STATE_KEY = 'session-turns'

/** Options for `restateSessionStore`. */
export interface RestateSessionStoreOptions {
  /**
   * Time source of the header timestamps (`createdAt` / `updatedAt`) the store stamps in `save()`, `saveMeta()` and
   * `updateStatus()`, replacing whatever the caller put there. Default `ctx.date.now()`. Must be replay-stable: the
   * value lands in state through `ctx.set`.
   */
  clock?: SessionClock
  /**
   * Never write state: for a store built from a SHARED handler's context. Legacy `session-turns` objects are read
   * without migrating them, and every mutating method throws a `SessionError` with code `session_read_only`.
   */
  readOnly?: boolean
}

type ReadableObjectContext = Omit<RestateObjectContextLike, 'set' | 'clear'> & Partial<Pick<RestateObjectContextLike, 'set' | 'clear'>>

/**
 * Construct a `SessionStore` backed by the bound virtual object's K/V state (`zidane_session` holds the header,
 * `zidane_turns` the turns). Single-tenant: every method ignores the `sessionId` argument, because the object is
 * already keyed by `ctx.key`. Bind one virtual-object key per session.
 */
export function restateSessionStore(ctx: RestateObjectContextLike, options?: RestateSessionStoreOptions): SessionStore
export function restateSessionStore(ctx: Omit<RestateObjectContextLike, 'set' | 'clear'>, options: RestateSessionStoreOptions & { readOnly: true }): SessionStore
export function restateSessionStore(ctx: ReadableObjectContext, options: RestateSessionStoreOptions = {}): SessionStore {
  const clock = options.clock ?? { now: () => ctx.date.now() }
  const state = createSessionState(ctx)
  const writable = (method: string): Required<Pick<RestateObjectContextLike, 'set' | 'clear'>> => {
    if (options.readOnly || !ctx.set || !ctx.clear) throw new SessionError(`restateSessionStore is read-only: ${method}() is not allowed.`, 'session_read_only')
    return { set: ctx.set.bind(ctx), clear: ctx.clear.bind(ctx) }
  }
  const writeHeader = (writer: Pick<RestateObjectContextLike, 'set'>, header: SessionMeta): void => {
    state.header = header
    writer.set(SESSION_STATE_KEY, header)
  }
  const writeTurns = (writer: Pick<RestateObjectContextLike, 'set' | 'clear'>, turns: SessionTurn[]): void => {
    state.turns = turns
    writer.set(SESSION_TURNS_STATE_KEY, turns)
    if (state.legacy) {
      writer.clear(LEGACY_SESSION_TURNS_STATE_KEY) // migrated: the turns now live under the current key
      state.legacy = false
    }
  }
  return {
    async load() {
      const header = await state.loadHeader()
      const turns = await state.loadTurns()
      if (header) return structuredClone({ ...header, turns })
      return state.legacy ? legacySession(ctx.key, turns) : null
    },
    async save(session) {
      const writer = writable('save')
      const { turns, ...meta } = session
      // Both stamps come from the store's replay-stable clock: the caller's (often Date.now()) would put a
      // different value into the journaled state write on every replay.
      const now = await clock.now()
      const createdAt = (await state.loadHeader())?.createdAt ?? now
      writeHeader(writer, structuredClone({ ...meta, createdAt, updatedAt: now }))
      writeTurns(writer, structuredClone(turns))
    },
    async appendTurns(_sessionId, turns) {
      const writer = writable('appendTurns')
      const current = [...await state.loadTurns()]
      const before = current.length
      appendNewTurns(current, turns)
      if (current.length !== before || state.legacy) writeTurns(writer, current)
    },
    async saveMeta(_sessionId, meta) {
      const writer = writable('saveMeta')
      const now = await clock.now()
      const createdAt = (await state.loadHeader())?.createdAt ?? now
      writeHeader(writer, structuredClone({ ...meta, createdAt, updatedAt: now }))
    },
    async updateStatus(_sessionId, status: SessionStatus) {
      const writer = writable('updateStatus')
      const header = await state.loadHeader()
      if (!header) return
      writeHeader(writer, { ...header, status, updatedAt: await clock.now() })
    },
    async list() {
      const header = await state.loadHeader()
      if (header) return [structuredClone(header)]
      const turns = await state.loadTurns()
      if (!state.legacy) return []
      const { turns: _turns, ...meta } = legacySession(ctx.key, turns)
      return [meta]
    },
  }
}

interface SessionStateCache {
  header: SessionMeta | null | undefined
  turns: SessionTurn[] | undefined
  legacy: boolean
  loadHeader(): Promise<SessionMeta | null>
  loadTurns(): Promise<SessionTurn[]>
}

/** Reads each state key at most once per store (the exclusive handler is the key's only writer). */
function createSessionState(ctx: Pick<RestateObjectContextLike, 'get'>): SessionStateCache {
  const cache: SessionStateCache = {
    header: undefined,
    turns: undefined,
    legacy: false,
    async loadHeader() {
      if (cache.header === undefined) cache.header = await ctx.get<SessionMeta>(SESSION_STATE_KEY)
      return cache.header
    },
    async loadTurns() {
      if (cache.turns !== undefined) return cache.turns
      const turns = await ctx.get<SessionTurn[]>(SESSION_TURNS_STATE_KEY)
      if (turns) return (cache.turns = turns)
      const legacy = await ctx.get<SessionTurn[]>(LEGACY_SESSION_TURNS_STATE_KEY)
      cache.legacy = Array.isArray(legacy)
      return (cache.turns = Array.isArray(legacy) ? legacy : [])
    },
  }
  return cache
}

/** A session synthesized from a legacy `session-turns` array, stamped with its turns' own times. */
function legacySession(id: string, turns: readonly SessionTurn[]): SessionData {
  const createdAt = turns[0]?.createdAt ?? 0
  return {
    schemaVersion: SESSION_SCHEMA_VERSION,
    id,
    status: 'idle',
    turns: structuredClone([...turns]),
    runs: [],
    createdAt,
    updatedAt: turns.at(-1)?.createdAt ?? createdAt,
    metadata: {},
  }
}

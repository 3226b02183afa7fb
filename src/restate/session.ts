import { SessionError } from '../errors/zidane-error'
import type { SessionClock } from '../session/session'
import { appendNewTurns } from '../session/memory-session-store'
import { SESSION_SCHEMA_VERSION } from '../session/types'
import type { SessionData, SessionMeta, SessionStatus, SessionStore, SessionTurn } from '../session/types'
import { createCoalescedClock } from './clock'
import type { RestateObjectContextLike } from './types'

/*
 * State layout. Every key name below is durable: never rename one, and never reuse a retired name for a new meaning.
 *
 *   zidane_session        the header (`SessionMeta`)
 *   zidane_turn_<i>       turn i (`SessionTurn`), i = 0, 1, 2, … (current layout)
 *   zidane_turns          all turns as one `SessionTurn[]` (previous layout: read and migrated, never written)
 *   session-turns         all turns as one `SessionTurn[]`, no header (legacy layout: read and migrated, never written)
 *
 * The per-turn layout holds the n turns under `zidane_turn_0 … zidane_turn_<n-1>`, and no `zidane_turn_<i>` key at or
 * above n: a reader takes the longest run of present keys from 0, so there is no count to keep in step (an append
 * writes only its new turns). Every write keeps that invariant in each state an invocation killed between two state
 * commands can leave behind:
 *   - an append writes its turns in ascending order (a cut leaves a shorter prefix);
 *   - `save()` over per-turn turns clears the surplus keys top-down, then writes 0, 1, … in ascending order;
 *   - a migration from an array key writes turns 1 … n-1 first and `zidane_turn_0` last: as long as `zidane_turn_0`
 *     is missing, the array key stays authoritative, and the keys an interrupted migration left behind form a run
 *     starting at 1, which the next migration finds and clears. Writing `zidane_turn_0` commits the migration; the
 *     array key is cleared right after it.
 */

/** State key of the session header (`SessionMeta`). Durable name: never rename. */
export const SESSION_STATE_KEY = 'zidane_session'
/** Prefix of the per-turn state keys: turn `i` lives under `zidane_turn_<i>` (see `sessionTurnStateKey`). Durable name. */
export const SESSION_TURN_STATE_KEY_PREFIX = 'zidane_turn_'
/**
 * State key of the previous layout, every turn in one `SessionTurn[]` (rewritten whole on each append). Read and
 * migrated to per-turn keys on a writable store's first write; never written. Durable name: never reuse.
 */
export const SESSION_TURNS_STATE_KEY = 'zidane_turns'
/** State key older deployments kept the turns under (a bare `SessionTurn[]`, no header); read and migrated, never written. */
export const LEGACY_SESSION_TURNS_STATE_KEY = 'session-turns'

/** The retired array keys, newest first. */
const ARRAY_STATE_KEYS = [SESSION_TURNS_STATE_KEY, LEGACY_SESSION_TURNS_STATE_KEY] as const

/** State key of turn `index` (0-based) in the per-turn layout. */
export function sessionTurnStateKey(index: number): string {
  return `${SESSION_TURN_STATE_KEY_PREFIX}${index}`
}

/** Options for `restateSessionStore`. */
export interface RestateSessionStoreOptions {
  /**
   * Time source of the header timestamps (`createdAt` / `updatedAt`) the store stamps in `save()`, `saveMeta()` and
   * `updateStatus()`, replacing whatever the caller put there. Must be replay-stable: the value lands in state through
   * `ctx.set`. Default: a coalesced `ctx.date.now()` clock (`createCoalescedClock`, one journaled anchor every
   * `DEFAULT_REANCHOR_EVERY` = 8 stamps). Header timestamps need ordering and replay stability, not wall accuracy, and
   * this saves a journaled clock read per header write.
   */
  clock?: SessionClock
  /**
   * Never write state: for a store built from a SHARED handler's context. Sessions in the `zidane_turns` or legacy
   * `session-turns` layout are read without migrating them, and every mutating method throws a `SessionError` with
   * code `session_read_only`.
   */
  readOnly?: boolean
}

type ReadableObjectContext = Omit<RestateObjectContextLike, 'set' | 'clear'> & Partial<Pick<RestateObjectContextLike, 'set' | 'clear'>>
type StateWriter = Pick<RestateObjectContextLike, 'set' | 'clear'>

/**
 * Construct a `SessionStore` backed by the bound virtual object's K/V state: the header under `zidane_session`, each
 * turn under its own `zidane_turn_<i>` key, so an append writes only the new turns (journal bytes stay linear in the
 * session size, and no single state write grows with the history). Sessions written in the previous `zidane_turns`
 * layout or the legacy `session-turns` layout are read as they are and migrated by the first write of a writable
 * store. `appendTurns` is idempotent by turn id.
 *
 * Loading reads the turns one key at a time (one journaled `GetState` per turn plus one past the end). Restate sends
 * the object's state eagerly with the invocation, so these resolve without a round trip; with lazy state each is one.
 *
 * Single-tenant: every method ignores the `sessionId` argument, because the object is already keyed by `ctx.key`.
 * Bind one virtual-object key per session, and build the store inside the handler (it caches what it read).
 */
export function restateSessionStore(ctx: RestateObjectContextLike, options?: RestateSessionStoreOptions): SessionStore
export function restateSessionStore(ctx: Omit<RestateObjectContextLike, 'set' | 'clear'>, options: RestateSessionStoreOptions & { readOnly: true }): SessionStore
export function restateSessionStore(ctx: ReadableObjectContext, options: RestateSessionStoreOptions = {}): SessionStore {
  const clock = options.clock ?? createCoalescedClock(() => ctx.date.now())
  const state = createSessionState(ctx)
  const writable = (method: string): StateWriter => {
    if (options.readOnly || !ctx.set || !ctx.clear) throw new SessionError(`restateSessionStore is read-only: ${method}() is not allowed.`, 'session_read_only')
    return { set: ctx.set.bind(ctx), clear: ctx.clear.bind(ctx) }
  }
  // Mutations run one at a time: each reads the cached layout, then writes.
  let queue: Promise<unknown> = Promise.resolve()
  const mutate = <T>(method: string, body: (writer: StateWriter) => Promise<T>): Promise<T> => {
    const writer = writable(method)
    const result = queue.then(async () => body(writer))
    queue = result.catch(() => undefined)
    return result
  }
  /** Stamps and writes the header, migrating the turns first when they are still in an array layout. */
  const writeHeader = async (writer: StateWriter, meta: Omit<SessionMeta, 'updatedAt'> & { updatedAt?: number }, now: number): Promise<void> => {
    const turns = await state.loadTurns()
    if (turns.layout !== 'turns') await state.rewriteTurns(writer, turns.turns)
    const header: SessionMeta = structuredClone({ ...meta, updatedAt: now })
    state.header = header
    writer.set(SESSION_STATE_KEY, header)
  }
  return {
    async load() {
      const header = await state.loadHeader()
      const { turns, layout } = await state.loadTurns()
      if (header) return structuredClone({ ...header, turns })
      return layout === 'legacy' ? legacySession(ctx.key, turns) : null
    },
    async save(session) {
      return mutate('save', async writer => {
        const { turns, ...meta } = session
        // Both stamps come from the store's replay-stable clock: the caller's (often Date.now()) would put a
        // different value into the journaled state write on every replay.
        const now = await clock.now()
        const createdAt = (await state.loadHeader())?.createdAt ?? now
        await state.rewriteTurns(writer, structuredClone(turns))
        await writeHeader(writer, { ...meta, createdAt }, now)
      })
    },
    async appendTurns(_sessionId, turns) {
      return mutate('appendTurns', async writer => state.appendTurns(writer, turns))
    },
    async saveMeta(_sessionId, meta) {
      return mutate('saveMeta', async writer => {
        const now = await clock.now()
        const createdAt = (await state.loadHeader())?.createdAt ?? now
        await writeHeader(writer, { ...meta, createdAt }, now)
      })
    },
    async updateStatus(_sessionId, status: SessionStatus) {
      return mutate('updateStatus', async writer => {
        const header = await state.loadHeader()
        if (!header) return
        await writeHeader(writer, { ...header, status }, await clock.now())
      })
    },
    async list() {
      const header = await state.loadHeader()
      if (header) return [structuredClone(header)]
      const { turns, layout } = await state.loadTurns()
      if (layout !== 'legacy') return []
      const { turns: _turns, ...meta } = legacySession(ctx.key, turns)
      return [meta]
    },
  }
}

/** Where the turns were found: per-turn keys (also: no turns at all), the `zidane_turns` array, or `session-turns`. */
type TurnLayout = 'turns' | 'array' | 'legacy'

interface LoadedTurns {
  turns: SessionTurn[]
  layout: TurnLayout
}

interface SessionStateCache {
  header: SessionMeta | null | undefined
  loadHeader(): Promise<SessionMeta | null>
  loadTurns(): Promise<LoadedTurns>
  /** Appends the turns whose ids are not stored yet (migrating an array layout first). */
  appendTurns(writer: StateWriter, turns: readonly SessionTurn[]): Promise<void>
  /** Replaces every turn with `turns` (migrating an array layout). */
  rewriteTurns(writer: StateWriter, turns: SessionTurn[]): Promise<void>
}

/** Reads each state key at most once per store (the exclusive handler is the key's only writer) and keeps the cache in step with its writes. */
function createSessionState(ctx: Pick<RestateObjectContextLike, 'get'>): SessionStateCache {
  let loaded: Promise<LoadedTurns> | undefined
  const cache: SessionStateCache = {
    header: undefined,
    async loadHeader() {
      if (cache.header !== undefined) return cache.header
      const header = await ctx.get<SessionMeta>(SESSION_STATE_KEY)
      cache.header ??= header ?? null // a header written while the read was in flight wins
      return cache.header
    },
    loadTurns() {
      if (!loaded) {
        loaded = readTurns(ctx)
        loaded.catch(() => { loaded = undefined }) // a failed read (the invocation is ending) is not cached
      }
      return loaded
    },
    async appendTurns(writer, turns) {
      const current = await cache.loadTurns()
      const next = [...current.turns]
      appendNewTurns(next, turns)
      if (current.layout !== 'turns') return cache.rewriteTurns(writer, next)
      // Ascending: an invocation cut off in between leaves a shorter, still gap-free run of turn keys.
      for (let index = current.turns.length; index < next.length; index++) writer.set(sessionTurnStateKey(index), next[index])
      current.turns = next
    },
    async rewriteTurns(writer, turns) {
      const current = await cache.loadTurns()
      if (current.layout === 'turns') {
        for (let index = current.turns.length - 1; index >= turns.length; index--) writer.clear(sessionTurnStateKey(index))
        turns.forEach((turn, index) => writer.set(sessionTurnStateKey(index), turn))
        // With zidane_turn_0 gone, readers fall back to the array keys: make sure a migration left none behind.
        if (turns.length === 0 && current.turns.length > 0) for (const key of ARRAY_STATE_KEYS) writer.clear(key)
      } else {
        await migrate(ctx, writer, current.layout, turns)
      }
      current.turns = turns
      current.layout = 'turns'
    },
  }
  return cache
}

/** Reads the turns: the per-turn keys when `zidane_turn_0` exists, else the `zidane_turns` array, else `session-turns`. */
async function readTurns(ctx: Pick<RestateObjectContextLike, 'get'>): Promise<LoadedTurns> {
  const turns: SessionTurn[] = []
  for (;;) {
    const turn = await ctx.get<SessionTurn>(sessionTurnStateKey(turns.length))
    if (turn == null) break
    turns.push(turn)
  }
  if (turns.length > 0) return { turns, layout: 'turns' }
  const array = await ctx.get<SessionTurn[]>(SESSION_TURNS_STATE_KEY)
  if (Array.isArray(array)) return { turns: array, layout: 'array' }
  const legacy = await ctx.get<SessionTurn[]>(LEGACY_SESSION_TURNS_STATE_KEY)
  if (Array.isArray(legacy)) return { turns: legacy, layout: 'legacy' }
  return { turns: [], layout: 'turns' }
}

/**
 * Moves the turns from an array key to per-turn keys (see the layout notes at the top). Keys an interrupted
 * migration left behind run from `zidane_turn_1` upwards; those at or above the new count are found and cleared
 * top-down first, the rest are overwritten.
 */
async function migrate(ctx: Pick<RestateObjectContextLike, 'get'>, writer: StateWriter, layout: Exclude<TurnLayout, 'turns'>, turns: readonly SessionTurn[]): Promise<void> {
  const from = Math.max(turns.length, 1)
  let end = from
  while (await ctx.get(sessionTurnStateKey(end)) != null) end++
  for (let index = end - 1; index >= from; index--) writer.clear(sessionTurnStateKey(index))
  for (let index = 1; index < turns.length; index++) writer.set(sessionTurnStateKey(index), turns[index])
  if (turns.length > 0) writer.set(sessionTurnStateKey(0), turns[0]) // commits the migration
  writer.clear(layout === 'array' ? SESSION_TURNS_STATE_KEY : LEGACY_SESSION_TURNS_STATE_KEY)
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

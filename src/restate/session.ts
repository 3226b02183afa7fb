import { copyData } from '../durable/copy-data'
import { SessionError } from '../errors/zidane-error'
import type { JsonObject } from '../json'
import type { SessionClock } from '../session/session'
import { SESSION_SCHEMA_VERSION } from '../session/types'
import type { RunTotals, SessionData, SessionMeta, SessionRun, SessionStatus, SessionStore, SessionTurn } from '../session/types'
import { createCoalescedClock } from './clock'
import { isRestatePromiseLike } from './types'
import type { RestateObjectContextLike } from './types'

/*
 * State layout: an append-only, paged log. Every key name below is durable: never rename one, never reuse one.
 *
 *   zidane_session     the header (`StoredSessionHeader`): status, timestamps, metadata, counters, totals and where
 *                      the history starts. Its size does not grow with the session.
 *   zidane_turn_<i>    turn i (`SessionTurn`), i = 0 … turnCount-1
 *   zidane_run_<i>     run record i (`SessionRun`), i = 0 … runCount-1, in the order the runs started
 *
 * The header's counters say which keys exist. A write sets the new turn and run keys first and the header last: an
 * invocation cut off in between leaves keys past the counters, which readers ignore and the next write overwrites.
 * While a run is in progress the header is written at its first boundary and its end, not after each record: a write the
 * run is sure to follow with another header write (a starting run's record and status, its assistant and results turns,
 * an ending run's record) only updates the store's copy, and the next header write carries it (see `deferHeader`).
 * Readers of a running session read on past the counter (`readRunningTurns`); a long run writes the header again
 * once `MAX_UNCOUNTED_TURNS` turns are past it, so what they read on stays a few keys.
 * `flushSessionHeader` writes a pending header at once: before a wait outside any step, and before a failure path
 * reads the state with a store of its own.
 * Loading reads the header, the turns from `historyFrom` (the compaction checkpoint: older turns are never sent to the
 * model again) and the runs from `runFrom` (the run that wrote turn `historyFrom`): a run of a long session reads what
 * it sends, not the whole log.
 */

/** State key of the session header (`StoredSessionHeader`). Durable name: never rename. */
export const SESSION_STATE_KEY = 'zidane_session'
/** Prefix of the per-turn state keys: turn `i` lives under `zidane_turn_<i>` (see `sessionTurnStateKey`). Durable name. */
export const SESSION_TURN_STATE_KEY_PREFIX = 'zidane_turn_'
/** Prefix of the per-run state keys: run record `i` lives under `zidane_run_<i>` (see `sessionRunStateKey`). Durable name. */
export const SESSION_RUN_STATE_KEY_PREFIX = 'zidane_run_'

/** State key of turn `index` (0-based). */
export function sessionTurnStateKey(index: number): string {
  return `${SESSION_TURN_STATE_KEY_PREFIX}${index}`
}

/** State key of run record `index` (0-based, in the order the runs started). */
export function sessionRunStateKey(index: number): string {
  return `${SESSION_RUN_STATE_KEY_PREFIX}${index}`
}

/** The session header as stored under `zidane_session`: bounded, whatever the number of turns and runs. */
export interface StoredSessionHeader {
  schemaVersion: number
  id: string
  status: SessionStatus
  createdAt: number
  updatedAt: number
  metadata: JsonObject
  /** Turns stored under `zidane_turn_0 … zidane_turn_<turnCount-1>`. */
  turnCount: number
  /** Run records stored under `zidane_run_0 … zidane_run_<runCount-1>`. */
  runCount: number
  /** Top-level runs (prompts) among them. */
  topLevelRunCount: number
  /** Sub-agent runs among them. */
  childRunCount: number
  /** First turn a run loads and sends (the compaction checkpoint). */
  historyFrom: number
  /** First run record a run loads: the one that wrote turn `historyFrom`. */
  runFrom: number
  /** The sum of the top-level runs' totals (each includes its sub-agents). */
  totals: RunTotals
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
   * Write the header once per run (default true: at its first boundary and its end, and every `MAX_UNCOUNTED_TURNS`
   * turns of a long run): a write the run is sure to follow with another header write only updates the store's copy
   * (see `deferHeader`; `flushSessionHeader` writes it at once). `false` writes the header after every record, as a
   * writer that is not `createAgent`'s loop may need.
   */
  headerPerBoundary?: boolean
  /** Never write state: for a store built from a SHARED handler's context. Every mutating method throws a `SessionError` `session_read_only`. */
  readOnly?: boolean
  /**
   * Durable combinators (pass `RestatePromise`): `load` then issues the reads of its window's turns and runs at once
   * and joins them with `RestatePromise.all`, one round trip for the window under lazy state instead of one per key.
   * Without them the keys are read one after the other.
   */
  promises?: StateReadCombinators
  /**
   * The header, already read by the caller (`null`: the key holds none): `load` uses it instead of reading it again.
   * A run issues that read together with its first step and joins both (`RestatePromise.all`), so its start costs one
   * round trip instead of two. Read it in the same invocation, with nothing written to the header since.
   */
  header?: StoredSessionHeader | null
  /**
   * Hold a new session's header back (default false): `save()` of a session the key does not hold yet only updates the
   * store's copy, written by the next header write (`flushSessionHeader` at once). For a caller sure to write the
   * header next (a run: its prompt turn); a store whose `createSession` must leave a session behind on its own keeps it false.
   */
  deferNewSession?: boolean
}

/** The SDK `RestatePromise` static the store's reads use. Method syntax keeps the SDK's generic signature assignable. */
export interface StateReadCombinators {
  /** Resolves with every value once all have settled. */
  all(values: readonly Promise<unknown>[]): Promise<unknown>
}

type ReadableObjectContext = Omit<RestateObjectContextLike, 'set' | 'clear'> & Partial<Pick<RestateObjectContextLike, 'set' | 'clear'>>
type StateReader = Pick<RestateObjectContextLike, 'get'>
type StateWriter = Pick<RestateObjectContextLike, 'set' | 'clear'>

/**
 * Construct a `SessionStore` backed by the bound virtual object's K/V state, as an append-only paged log (see the
 * layout above): an append writes its new turns and the small header, a run record is written when it changes, and
 * `load` reads the header plus the turns and runs after the compaction checkpoint — the loaded `SessionData` then
 * carries a `window` saying where its turns and runs start. `appendTurns` is idempotent by turn id.
 *
 * Single-tenant: every method ignores the `sessionId` argument, because the object is already keyed by `ctx.key`.
 * Bind one virtual-object key per session, and build the store inside the handler (it caches what it read).
 */
export function restateSessionStore(ctx: RestateObjectContextLike, options?: RestateSessionStoreOptions): SessionStore
export function restateSessionStore(ctx: Omit<RestateObjectContextLike, 'set' | 'clear'>, options: RestateSessionStoreOptions & { readOnly: true }): SessionStore
export function restateSessionStore(ctx: ReadableObjectContext, options: RestateSessionStoreOptions = {}): SessionStore {
  const clock = options.clock ?? createCoalescedClock(() => ctx.date.now())
  const log = createSessionLog(ctx, options.promises, options.header)
  registerHeaderLog(ctx, log)
  const defer = (write: HeaderWrite): boolean => options.headerPerBoundary !== false && deferHeader(write)
  const writable = (method: string): StateWriter => {
    if (options.readOnly || !ctx.set || !ctx.clear) throw new SessionError(`restateSessionStore is read-only: ${method}() is not allowed.`, 'session_read_only')
    return { set: ctx.set.bind(ctx), clear: ctx.clear.bind(ctx) }
  }
  // Mutations run one at a time: each reads the cached log, then writes.
  let queue: Promise<unknown> = Promise.resolve()
  const mutate = <T>(method: string, body: (writer: StateWriter) => Promise<T>): Promise<T> => {
    const writer = writable(method)
    const result = queue.then(async () => body(writer))
    queue = result.catch(() => undefined)
    return result
  }
  return {
    async load() {
      return (await log.load()) ? log.toSessionData() : null
    },
    async save(session) {
      return mutate('save', async (writer) => {
        await log.load()
        const { turns, runs, window: _window, ...meta } = session
        log.replaceTurns(writer, copyData(turns), session.window?.turnOffset ?? 0)
        // Both stamps come from the store's replay-stable clock: the caller's (often Date.now()) would put a
        // different value into the journaled state write on every replay.
        const now = await clock.now()
        const created = log.header === null
        log.writeRuns(writer, copyData(runs), session.window?.runOffset ?? 0, true)
        log.writeHeader(writer, { ...meta, createdAt: log.header?.createdAt ?? now, updatedAt: now }, created && options.deferNewSession === true && options.headerPerBoundary !== false)
      })
    },
    async appendTurns(_sessionId, turns) {
      return mutate('appendTurns', async (writer) => {
        if (!(await log.load())) return
        const fresh = log.appendTurns(writer, turns)
        if (fresh.length > 0) log.writeHeader(writer, {}, defer({ turns: fresh, running: log.header?.status === 'running', uncounted: log.uncountedTurns() }))
      })
    },
    async saveMeta(_sessionId, meta) {
      return mutate('saveMeta', async (writer) => {
        await log.load()
        const { runs, window, turns: _turns, ...rest } = meta as SessionMeta & { turns?: unknown }
        const now = await clock.now()
        const changed = log.writeRuns(writer, copyData(runs), window?.runOffset ?? 0, false)
        log.writeHeader(writer, { ...rest, createdAt: log.header?.createdAt ?? now, updatedAt: now }, defer({ runs: changed, sessionStatus: rest.status }))
      })
    },
    async updateStatus(_sessionId, status: SessionStatus) {
      return mutate('updateStatus', async (writer) => {
        if (!(await log.load())) return
        log.writeHeader(writer, { status, updatedAt: await clock.now() }, defer({ status }))
      })
    },
    async list() {
      if (!(await log.load())) return []
      const { turns: _turns, ...meta } = log.toSessionData()
      return [meta]
    },
  }
}

/** What a store write changed, for {@link deferHeader}. */
interface HeaderWrite {
  /** Turns it appended, and whether the session is running. */
  turns?: readonly SessionTurn[]
  running?: boolean
  /** Turns stored past the counter of the header in state, those included. */
  uncounted?: number
  /** Run records it wrote, and the session's status it saved with them. */
  runs?: readonly SessionRun[]
  sessionStatus?: SessionStatus
  /** The status it set. */
  status?: SessionStatus
}

function isResultsTurn(turn: SessionTurn): boolean {
  return turn.role === 'user' && turn.content.length > 0 && turn.content.every(block => block.type === 'tool_result')
}

/**
 * Most turns a running session keeps past the counter of its header in state: past it, an append writes the header,
 * so a reader of the session ({@link readRunningTurns}) reads at most this many keys more, however long the run.
 */
export const MAX_UNCOUNTED_TURNS = 32

/**
 * Whether the header write after `write` can wait for the next one: true only when the run that made it is sure to
 * write the header again (`createAgent` ends every run with its status), and the header's counters still only name
 * keys that exist. A starting run (its record, then `running`, then its prompt turn: written there), a running
 * session's assistant and results turns (counted at the run's end, or at a wait outside any step), a final assistant
 * turn (no tool call: the run's end follows) and an ending run's record (written with its status) wait. Readers of a
 * running session read on past the counter ({@link readRunningTurns}): they see a turn's calls while they run. Turns
 * past {@link MAX_UNCOUNTED_TURNS} are counted at once.
 */
function deferHeader(write: HeaderWrite): boolean {
  if (write.status !== undefined) return write.status === 'running'
  if (write.turns) {
    if ((write.uncounted ?? 0) > MAX_UNCOUNTED_TURNS) return false
    if (write.running === true) return write.turns.every(turn => turn.role === 'assistant' || isResultsTurn(turn))
    return write.turns.every(turn => turn.role === 'assistant' && !turn.content.some(block => block.type === 'tool_use'))
  }
  if (!write.runs || write.runs.length === 0) return false
  return write.sessionStatus === 'running' || write.runs.every(run => run.status === 'running')
}

const headerLogs = new WeakMap<object, SessionLog[]>()

function registerHeaderLog(ctx: object, log: SessionLog): void {
  const logs = headerLogs.get(ctx) ?? []
  headerLogs.set(ctx, logs)
  logs.push(log)
}

/**
 * Writes at once the header a `restateSessionStore` of `ctx` is holding back (see the layout above): before the run
 * waits outside any step (a question, an approval, a sub-agent), so `GET` of the session shows what led to the wait,
 * and before a failure path reads the session with a store of its own. No-op when nothing is held back. Outside any step.
 */
export function flushSessionHeader(ctx: object): void {
  for (const log of headerLogs.get(ctx) ?? []) log.flushHeader()
}

/**
 * A copy of the header the last `restateSessionStore` built on `ctx` holds (what it loaded, as its writes since left
 * it), once that store has loaded a session; `undefined` before, or when it holds none. Journals nothing: a handler
 * that needs the header its run just wrote reads it here instead of with a state read. Call
 * {@link flushSessionHeader} first when the header must also be in state.
 */
export function heldSessionHeader(ctx: object): StoredSessionHeader | undefined {
  const header = headerLogs.get(ctx)?.at(-1)?.header
  return header ? copyData(header) : undefined
}

/** Reads the session header, `null` for a key that never ran: one state read. For shared handlers too. */
export async function readSessionHeader(ctx: StateReader): Promise<StoredSessionHeader | null> {
  const header = await ctx.get<StoredSessionHeader>(SESSION_STATE_KEY)
  return header ?? null
}

/**
 * Reads turns `[from, to)` (one state read each), up to the first missing key. For shared handlers too. With
 * `promises` (`RestatePromise`) the reads are issued at once and joined durably; without, one after the other.
 */
export async function readSessionTurns(ctx: StateReader, from: number, to: number, promises?: StateReadCombinators): Promise<SessionTurn[]> {
  return readRange<SessionTurn>(ctx, sessionTurnStateKey, from, to, promises)
}

/** Reads run records `[from, to)` like {@link readSessionTurns}. For shared handlers too. */
export async function readSessionRuns(ctx: StateReader, from: number, to: number, promises?: StateReadCombinators): Promise<SessionRun[]> {
  return readRange<SessionRun>(ctx, sessionRunStateKey, from, to, promises)
}

/** Keys a read of the turns past a running session's counter asks for at once. */
const RUNNING_TURNS_BATCH = 8

/**
 * The turns the running runs of `runs` (and their sub-agents) wrote past the header's counter `from`. While a run is
 * in progress the header is written once per run (and before a wait outside any step), so a running session's newest
 * turns are past its counter: a reader of a session whose header says `running` reads on from it, and so does a run
 * that loads a session a killed run left `running` (its clean-up closes only the calls that never finished). A run
 * whose sub-agents' records are in `runs` without its own counts as running (see `runningRunIds`). Keys of an older
 * run past the counter stop the read. Reads `RUNNING_TURNS_BATCH` keys at a time, joined with `promises`
 * when given (`RestatePromise`: journaled, a replay reads the same). For shared handlers too.
 */
export async function readRunningTurns(ctx: StateReader, from: number, runs: readonly SessionRun[], promises?: StateReadCombinators): Promise<SessionTurn[]> {
  const running = runningRunIds(runs)
  if (running.size === 0) return []
  return readOnWhile(from, (start, end) => readSessionTurns(ctx, start, end, promises), turn => running.has(turn.runId.split('/')[0] ?? turn.runId))
}

/**
 * The sub-agent records the running runs of `runs` wrote past the header's counter of runs `from` (a sub-agent's record
 * is written when it ends, and the header at the run's next boundary): read on from it while each is the record of a
 * sub-agent of a running run (or of one read before it), so a run killed in between loses none and the next run
 * writes its own record after them. Reads `RUNNING_TURNS_BATCH` keys at a time, as {@link readRunningTurns} does.
 */
async function readRunningChildren(ctx: StateReader, from: number, runs: readonly SessionRun[], promises?: StateReadCombinators): Promise<SessionRun[]> {
  const parents = runningRunIds(runs)
  if (parents.size === 0) return []
  return readOnWhile(from, (start, end) => readSessionRuns(ctx, start, end, promises), (run) => {
    if (run.parentRunId === undefined || !parents.has(run.parentRunId)) return false
    parents.add(run.id)
    return true
  })
}

/**
 * The values from key `from` on, read `RUNNING_TURNS_BATCH` keys at a time, up to the first missing one or the first
 * that `belongs` refuses (asked in key order, once each).
 */
async function readOnWhile<T>(from: number, readBatch: (start: number, end: number) => Promise<T[]>, belongs: (value: T) => boolean): Promise<T[]> {
  const found: T[] = []
  for (let index = from; ; index += RUNNING_TURNS_BATCH) {
    const batch = await readBatch(index, index + RUNNING_TURNS_BATCH)
    for (const value of batch) {
      if (!belongs(value)) return found
      found.push(value)
    }
    if (batch.length < RUNNING_TURNS_BATCH) return found
  }
}

/**
 * The runs of `runs` that may have written turns past the counter: the running ones, and a run whose sub-agents' records
 * are listed without its own (a reader lists the latest records, and a run's sub-agents can fill them).
 */
function runningRunIds(runs: readonly SessionRun[]): Set<string> {
  const listed = new Set(runs.map(run => run.id))
  const running = new Set(runs.filter(run => run.status === 'running').map(run => run.id))
  for (const run of runs) if (run.parentRunId !== undefined && !listed.has(run.parentRunId)) running.add(run.parentRunId)
  return running
}

async function readRange<T>(ctx: StateReader, keyOf: (index: number) => string, from: number, to: number, promises?: StateReadCombinators): Promise<T[]> {
  const first = Math.max(0, from)
  if (promises && to - first > 1) return readRangeAtOnce<T>(ctx, keyOf, first, to, promises)
  const values: T[] = []
  for (let index = first; index < to; index++) {
    const value = await ctx.get<T>(keyOf(index))
    if (value == null) break
    values.push(value)
  }
  return values
}

/**
 * Issues every read of `[from, to)` in index order (the same commands on every replay) and joins them with the
 * durable `all`; the result ends at the first missing key, as the one-by-one read does. Falls back to reading one
 * after the other when the context's reads are not durable promises (a fake or an in-memory context).
 */
async function readRangeAtOnce<T>(ctx: StateReader, keyOf: (index: number) => string, from: number, to: number, promises: StateReadCombinators): Promise<T[]> {
  const reads = Array.from({ length: to - from }, (_, offset) => ctx.get<T>(keyOf(from + offset)))
  const values = (reads.every(read => isRestatePromiseLike(read)) ? await promises.all(reads) : await settleInOrder(reads)) as Array<T | null>
  const missing = values.findIndex(value => value == null)
  return (missing === -1 ? values : values.slice(0, missing)) as T[]
}

/**
 * Awaits `reads` one after the other (they are already issued). A later read that fails while an earlier one is
 * awaited is observed at once (no unhandled rejection); its failure is thrown when its turn comes.
 */
async function settleInOrder<T>(reads: readonly Promise<T>[]): Promise<T[]> {
  for (const read of reads) read.catch(() => undefined)
  const values: T[] = []
  for (const read of reads) values.push(await read)
  return values
}

/** An all-zero {@link RunTotals}. */
export function emptyRunTotals(): RunTotals {
  return { usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0, modelRequests: 0, toolCalls: 0, turns: 0 }
}

/** The loaded part of the log, kept in step with the store's writes (the exclusive handler is the key's only writer). */
interface SessionLog {
  header: StoredSessionHeader | null
  /** Loads the header and the window once; resolves whether the session exists. */
  load(): Promise<boolean>
  toSessionData(): SessionData
  /** Writes the turns whose ids are not stored yet; returns those. */
  appendTurns(writer: StateWriter, turns: readonly SessionTurn[]): SessionTurn[]
  /** Replaces the turns from absolute index `offset` on with `turns`, clearing the keys past them. */
  replaceTurns(writer: StateWriter, turns: SessionTurn[], offset: number): void
  /** Writes the run records that changed (`runs[0]` is run `offset`) and returns them; with `replace`, clears the records past them. */
  writeRuns(writer: StateWriter, runs: SessionRun[], offset: number, replace: boolean): SessionRun[]
  /**
   * Brings the header up to date with `changes`, its counters and checkpoint; writes it, with `defer` only keeps it for
   * the next write or {@link SessionLog.flushHeader}.
   */
  writeHeader(writer: StateWriter, changes: Partial<SessionMeta>, defer?: boolean): void
  /** Writes the header a deferred write kept back, if any. */
  flushHeader(): void
  /** Turns written past the counter of the header in state (as loaded, or as this log last wrote it). */
  uncountedTurns(): number
}

function createSessionLog(ctx: StateReader & { key: string }, promises?: StateReadCombinators, preread?: StoredSessionHeader | null): SessionLog {
  let loading: Promise<void> | undefined
  let turnOffset = 0
  let turns: SessionTurn[] = []
  /** Ids of `turns`, built on the first append after a load or a replace. */
  let knownTurnIds: Set<string> | undefined
  let runOffset = 0
  let runs: SessionRun[] = []
  /** JSON of each loaded run record, to write only the records that changed. */
  let runJson: string[] = []
  /** Top-level and sub-agent runs before the loaded ones. */
  let before = { topLevel: 0, children: 0 }
  let totals = emptyRunTotals()
  /** Set while the header in `log.header` is newer than the stored one: where to write it. */
  let pendingWriter: StateWriter | undefined
  /** The turn counter of the header in state. */
  let storedTurnCount = 0
  const topLevelLoaded = (): number => runs.filter(run => run.label === undefined).length
  const log: SessionLog = {
    header: null,
    load() {
      loading ??= (async () => {
        const header = preread === undefined ? await readSessionHeader(ctx) : preread && copyData(preread)
        if (header && !log.header) {
          storedTurnCount = header.turnCount
          turnOffset = header.historyFrom
          turns = await readSessionTurns(ctx, header.historyFrom, header.turnCount, promises)
          runOffset = header.runFrom
          runs = await readSessionRuns(ctx, header.runFrom, header.runCount, promises)
          before = { topLevel: header.topLevelRunCount - topLevelLoaded(), children: header.childRunCount - (runs.length - topLevelLoaded()) }
          if (header.status === 'running') {
            turns.push(...(await readRunningTurns(ctx, header.turnCount, runs, promises)))
            runs.push(...(await readRunningChildren(ctx, header.runCount, runs, promises)))
          }
          runJson = runs.map(run => JSON.stringify(run))
          totals = copyData(header.totals)
        }
        log.header ??= header // a header written while the read was in flight wins
      })()
      loading.catch(() => { loading = undefined }) // a failed read (the invocation is ending) is not cached
      return loading.then(() => log.header !== null)
    },
    toSessionData() {
      const header = log.header as StoredSessionHeader
      const data: SessionData = {
        schemaVersion: header.schemaVersion,
        id: header.id,
        status: header.status,
        turns: copyData(turns),
        runs: copyData(runs),
        createdAt: header.createdAt,
        updatedAt: header.updatedAt,
        metadata: copyData(header.metadata),
      }
      if (header.historyFrom > 0) data.historyFrom = header.historyFrom
      if (turnOffset > 0 || runOffset > 0) data.window = { turnOffset, runOffset, topLevelRunsBefore: before.topLevel, childRunsBefore: before.children }
      return data
    },
    appendTurns(writer, fresh) {
      const known = knownTurnIds ??= new Set(turns.map(turn => turn.id))
      const added: SessionTurn[] = []
      for (const turn of fresh) {
        if (known.has(turn.id)) continue
        known.add(turn.id)
        writer.set(sessionTurnStateKey(turnOffset + turns.length), turn)
        // Kept as given, not copied: the session hands over copies it never changes, and every read copies out.
        turns.push(turn)
        added.push(turn)
      }
      return added
    },
    replaceTurns(writer, next, offset) {
      const stored = turnOffset + turns.length
      for (let index = stored - 1; index >= offset + next.length; index--) writer.clear(sessionTurnStateKey(index))
      next.forEach((turn, index) => writer.set(sessionTurnStateKey(offset + index), turn))
      turnOffset = offset
      turns = next
      knownTurnIds = undefined
    },
    writeRuns(writer, next, offset, replace) {
      const stored = runOffset + runs.length
      const changed: SessionRun[] = []
      next.forEach((run, position) => {
        const index = offset + position
        const cached = index - runOffset
        const json = JSON.stringify(run)
        if (cached >= 0 && runJson[cached] === json) return
        const previous = cached >= 0 ? runs[cached] : undefined
        if (run.label === undefined) addTotals(totals, run.totals, previous?.totals)
        writer.set(sessionRunStateKey(index), run)
        changed.push(run)
        if (cached < 0) return
        runs[cached] = copyData(run)
        runJson[cached] = json
      })
      if (!replace) return changed
      for (let index = stored - 1; index >= offset + next.length; index--) writer.clear(sessionRunStateKey(index))
      if (offset === 0) before = { topLevel: 0, children: 0 }
      runOffset = offset
      runs = copyData(next)
      runJson = runs.map(run => JSON.stringify(run))
      if (offset === 0) totals = sumTopLevelTotals(runs)
      return changed
    },
    flushHeader() {
      if (!pendingWriter || !log.header) return
      pendingWriter.set(SESSION_STATE_KEY, log.header)
      storedTurnCount = log.header.turnCount
      pendingWriter = undefined
    },
    uncountedTurns: () => turnOffset + turns.length - storedTurnCount,
    writeHeader(writer, changes, defer = false) {
      const base = log.header
      const historyFrom = Math.max(base?.historyFrom ?? 0, changes.historyFrom ?? 0, turnOffset)
      const lastTurnAt = turns.at(-1)?.createdAt ?? 0
      const header: StoredSessionHeader = {
        schemaVersion: changes.schemaVersion ?? base?.schemaVersion ?? SESSION_SCHEMA_VERSION,
        id: changes.id ?? base?.id ?? ctx.key,
        status: changes.status ?? base?.status ?? 'idle',
        createdAt: changes.createdAt ?? base?.createdAt ?? lastTurnAt,
        // An append stamps no clock: the header is as recent as its newest turn.
        updatedAt: changes.updatedAt ?? Math.max(base?.updatedAt ?? 0, lastTurnAt),
        // The stored header's metadata is never changed in place (a new header gets a copy of new metadata).
        metadata: changes.metadata ? copyData(changes.metadata) : base?.metadata ?? {},
        turnCount: turnOffset + turns.length,
        runCount: runOffset + runs.length,
        topLevelRunCount: before.topLevel + topLevelLoaded(),
        childRunCount: before.children + runs.length - topLevelLoaded(),
        historyFrom,
        runFrom: runFromFor(historyFrom, base?.runFrom ?? runOffset),
        totals: copyData(totals), // the header keeps its own: the log's running totals change with each run record
      }
      log.header = header
      pendingWriter = writer
      if (!defer) log.flushHeader()
    },
  }
  /** The first run to load with the history starting at turn `historyFrom`: the run that wrote that turn. */
  const runFromFor = (historyFrom: number, current: number): number => {
    const turn = turns[historyFrom - turnOffset]
    const position = turn ? runs.findIndex(run => run.id === turn.runId) : -1
    return position === -1 ? current : Math.max(current, runOffset + position)
  }
  return log
}

function sumTopLevelTotals(runs: readonly SessionRun[]): RunTotals {
  const totals = emptyRunTotals()
  for (const run of runs) if (run.label === undefined) addTotals(totals, run.totals, undefined)
  return totals
}

/** Adds `next - previous` to `totals` (a run record's totals changed). */
function addTotals(totals: RunTotals, next: RunTotals | undefined, previous: RunTotals | undefined): void {
  const sign = (value: RunTotals | undefined, pick: (totals: RunTotals) => number): number => (value ? pick(value) : 0)
  const delta = (pick: (totals: RunTotals) => number): number => sign(next, pick) - sign(previous, pick)
  totals.usage.inputTokens += delta(t => t.usage.inputTokens)
  totals.usage.outputTokens += delta(t => t.usage.outputTokens)
  totals.usage.cacheReadTokens += delta(t => t.usage.cacheReadTokens)
  totals.usage.cacheWriteTokens += delta(t => t.usage.cacheWriteTokens)
  totals.costUsd = Math.round((totals.costUsd + delta(t => t.costUsd)) * 1e9) / 1e9
  totals.modelRequests += delta(t => t.modelRequests)
  totals.toolCalls += delta(t => t.toolCalls)
  totals.turns += delta(t => t.turns)
}

import { copyData } from '../durable/copy-data'
import { SessionError } from '../errors/zidane-error'
import type { JsonObject } from '../json'
import { buildHealTurns, HEAL_TEXT } from './heal'
import { migrateSession } from './migrate-session'
import { SESSION_SCHEMA_VERSION } from './types'
import type { SessionData, SessionMeta, SessionRun, SessionStatus, SessionStore, SessionTurn } from './types'

/** A clock the session stamps `updatedAt` with; durable runtimes pass their replay-stable clock. */
export interface SessionClock { now(): number | Promise<number> }

const systemClock: SessionClock = { now: () => Date.now() }

/** What a session just wrote: new turns, or its header (run records, status, metadata). */
export type SessionChange = { kind: 'turns'; turns: readonly SessionTurn[] } | { kind: 'meta'; meta: SessionMeta }

/** A live session: its data and the store it writes through. Writes go to the store at once. */
export class Session {
  readonly store: SessionStore | undefined
  private data: SessionData
  private clock: SessionClock
  private readonly listeners = new Set<(change: SessionChange) => void>()
  /** Ids of the loaded turns, built on the first append (appends skip the ids already present). */
  private knownTurnIds: Set<string> | undefined

  constructor(data: SessionData, store: SessionStore | undefined, clock: SessionClock = systemClock) {
    this.data = data
    this.store = store
    this.clock = clock
  }

  get id(): string { return this.data.id }
  get status(): SessionStatus { return this.data.status }
  /**
   * The loaded turns: every turn, or the recent part of a long session (see {@link Session.turnOffset}). The session's
   * own objects, shared with its store's cache: read them, never change them.
   */
  get turns(): readonly SessionTurn[] { return this.data.turns }
  /** The loaded runs: every run, or the recent ones of a long session. */
  get runs(): readonly SessionRun[] { return this.data.runs }
  get metadata(): JsonObject { return this.data.metadata }
  /** Absolute index of `turns[0]` (0 unless the store loaded only a window). */
  get turnOffset(): number { return this.data.window?.turnOffset ?? 0 }
  /** Number of turns of the whole session, loaded or not. */
  get turnCount(): number { return this.turnOffset + this.data.turns.length }
  /** Number of top-level runs (prompts) of the whole session. */
  get topLevelRunCount(): number { return (this.data.window?.topLevelRunsBefore ?? 0) + this.data.runs.filter(run => run.label === undefined).length }
  /** Number of sub-agent runs of the whole session. */
  get childRunCount(): number { return (this.data.window?.childRunsBefore ?? 0) + this.data.runs.filter(run => run.label !== undefined).length }
  /** First turn (absolute index) later runs send to the model; older turns were compacted away for good. */
  get historyFrom(): number { return Math.max(this.data.historyFrom ?? 0, this.turnOffset) }

  /** The loaded turns whose absolute index is in `[from, to)`. */
  turnsBetween(from: number, to: number = this.turnCount): SessionTurn[] {
    const offset = this.turnOffset
    return this.data.turns.slice(Math.max(0, from - offset), Math.max(0, to - offset))
  }

  /**
   * Moves the history start forward to turn `index` (never back): turns before it are not sent to the model again and
   * a store may stop loading them. Saved with the next header write.
   */
  dropHistoryBefore(index: number): void {
    if (index > this.historyFrom && index <= this.turnCount) this.data.historyFrom = index
  }

  /** Calls `listener` after each write (new turns, or the header), in order; returns the function that stops it. */
  onChange(listener: (change: SessionChange) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Replaces the clock that stamps `updatedAt` (durable runtimes need a replay-stable one). */
  useClock(clock: SessionClock): void { this.clock = clock }

  /** A deep copy of the session as persisted. */
  toJSON(): SessionData { return copyData(this.data) }

  /**
   * Appends turns (skipping ids already present) and writes them to the store. The session keeps its own copies and
   * never changes them; the store is handed those copies, so a store that caches turns need not copy them again.
   */
  async appendTurns(turns: readonly SessionTurn[]): Promise<void> {
    const known = this.knownTurnIds ??= new Set(this.data.turns.map(turn => turn.id))
    const fresh = turns.filter(turn => !known.has(turn.id))
    if (fresh.length === 0) return
    const copies = copyData(fresh)
    for (const turn of copies) known.add(turn.id)
    this.data.turns.push(...copies)
    await this.store?.appendTurns(this.data.id, copies)
    this.notify({ kind: 'turns', turns: fresh })
  }

  /** Adds or replaces a run record by id and saves the header. */
  async upsertRun(run: SessionRun): Promise<void> {
    const index = this.data.runs.findIndex(existing => existing.id === run.id)
    if (index === -1) this.data.runs.push(copyData(run))
    else this.data.runs[index] = copyData(run)
    await this.saveMeta()
  }

  /** Sets the status and saves it. */
  async setStatus(status: SessionStatus): Promise<void> {
    this.data.status = status
    this.data.updatedAt = await this.clock.now()
    await this.store?.updateStatus(this.data.id, status)
  }

  /** Merges metadata and saves the header. */
  async setMetadata(metadata: JsonObject): Promise<void> {
    this.data.metadata = { ...this.data.metadata, ...metadata }
    await this.saveMeta()
  }

  /**
   * Closes every tool_use that has no tool_result with `text` (default: the heal text), so the history is valid
   * for the Anthropic API. Returns the number of calls closed.
   */
  async healInterruptedToolCalls(text: string = HEAL_TEXT, runId?: string): Promise<number> {
    const lastRunId = runId ?? this.data.runs.at(-1)?.id ?? 'heal'
    const healTurns = buildHealTurns(this.data.turns, text, lastRunId, await this.clock.now())
    await this.appendTurns(healTurns)
    const closed = healTurns[0]?.content.length ?? 0
    for (const run of this.data.runs) if (run.status === 'running') run.status = 'interrupted'
    if (closed > 0 || this.data.status === 'running') {
      this.data.status = 'idle'
      await this.saveMeta()
    }
    return closed
  }

  private async saveMeta(): Promise<void> {
    this.data.updatedAt = await this.clock.now()
    const { turns: _turns, ...meta } = this.data
    await this.store?.saveMeta(this.data.id, copyData(meta) satisfies SessionMeta)
    this.notify({ kind: 'meta', meta })
  }

  private notify(change: SessionChange): void {
    for (const listener of this.listeners) listener(change)
  }
}

/** Options of `createSession`. Without a store, the session lives in memory only. */
export interface CreateSessionOptions {
  id?: string
  store?: SessionStore
  metadata?: JsonObject
  clock?: SessionClock
}

/** Creates a new, empty session and saves it to `store` (when given). */
export async function createSession(options: CreateSessionOptions = {}): Promise<Session> {
  const clock = options.clock ?? systemClock
  const now = await clock.now()
  const data: SessionData = {
    schemaVersion: SESSION_SCHEMA_VERSION,
    id: options.id ?? crypto.randomUUID(),
    status: 'idle',
    turns: [],
    runs: [],
    createdAt: now,
    updatedAt: now,
    metadata: options.metadata ?? {},
  }
  await options.store?.save(data)
  return new Session(data, options.store, clock)
}

/** Loads a session from `store`, migrating older schema versions; resolves `null` when it does not exist. */
export async function loadSession(store: SessionStore, sessionId: string, options: { clock?: SessionClock } = {}): Promise<Session | null> {
  const data = await store.load(sessionId)
  if (!data) return null
  if (typeof data.schemaVersion !== 'number') throw new SessionError(`Session ${sessionId} has no schemaVersion.`, 'session_corrupt')
  return new Session(migrateSession(data), store, options.clock)
}

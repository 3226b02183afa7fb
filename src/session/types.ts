import type { JsonObject } from '../json'
import type { ContentBlock, Role, Usage } from '../providers/content'

/** Version of the persisted session shape. Bump it with a migration in `migrate-session.ts`. */
export const SESSION_SCHEMA_VERSION = 1

/** Where a session stands: idle between runs, running, waiting on a question, or how its last run ended. */
export type SessionStatus = 'idle' | 'running' | 'waiting' | 'completed' | 'aborted' | 'cancelled' | 'error' | 'failed' | 'suspended' | 'limit' | 'timeout'

/** How a run ended (or that it still runs). */
export type RunStatus = 'running' | 'completed' | 'aborted' | 'timeout' | 'limit' | 'error' | 'failed' | 'suspended' | 'cancelled' | 'interrupted'

/** One message of a session, with the run that wrote it. Ids are deterministic, so appending a turn twice is a no-op. */
export interface SessionTurn {
  id: string
  runId: string
  role: Role
  content: ContentBlock[]
  createdAt: number
  usage?: Usage
  costUsd?: number
  model?: string
}

/** Token and cost totals of a run, children included. */
export interface RunTotals {
  usage: Usage
  costUsd: number
  modelRequests: number
  toolCalls: number
  turns: number
}

/** One run of a session (a prompt, or a child agent's task) and how it ended. */
export interface SessionRun {
  id: string
  status: RunStatus
  prompt: string
  startedAt: number
  endedAt?: number
  /** `child-1`, `child-2`, … for sub-agent runs; absent for top-level runs. */
  label?: string
  depth: number
  parentRunId?: string
  parentCallId?: string
  model?: string
  /** Limits the run started with; a resumed run keeps them. */
  limits?: JsonObject
  /** Number of session turns before the run began; a resumed run rebuilds its history from them. */
  baseTurnCount?: number
  /** Fingerprint of the history before the run, to detect a rewritten history on resume. */
  baseFingerprint?: string
  totals?: RunTotals
  text?: string
  error?: string
  /** The OpenTelemetry trace of the run's spans, when its host gave one (`RunOptions.traceId`). */
  traceId?: string
}

/** The persisted form of a session: plain JSON with a schema version. */
export interface SessionData {
  schemaVersion: number
  id: string
  status: SessionStatus
  turns: SessionTurn[]
  runs: SessionRun[]
  createdAt: number
  updatedAt: number
  metadata: JsonObject
  /**
   * The first turn (absolute index) later runs send to the model: the turns before it were dropped by compaction for
   * good, so a store may leave them unloaded. Absent: 0.
   */
  historyFrom?: number
  /** Set by a store that loaded only the recent part of a long session (see {@link SessionWindow}). Absent: everything is loaded. */
  window?: SessionWindow
}

/**
 * The part of a long session a store loaded: `turns[0]` is turn `turnOffset` of the session and `runs[0]` is run
 * `runOffset`; what lies before was left in the store (history compacted away for good, runs that ended long ago).
 */
export interface SessionWindow {
  turnOffset: number
  runOffset: number
  /** Top-level runs before `runOffset`. */
  topLevelRunsBefore: number
  /** Sub-agent runs before `runOffset`. */
  childRunsBefore: number
}

/** The header of a session without its turns: what `saveMeta` writes and `list` returns. */
export type SessionMeta = Omit<SessionData, 'turns'>

/**
 * Where sessions live. Implementations: in memory, SQLite, Restate virtual-object state.
 * Contract: `appendTurns` ignores turns whose id is already stored (replays append the same turns again), and may
 * keep the turn objects it is given rather than copies (callers hand over turns they no longer change: a `Session`
 * passes its own copies); `load` returns `null` for an unknown id, and what it returns belongs to the caller; every
 * method may be called again with the same arguments safely.
 */
export interface SessionStore {
  load(sessionId: string): Promise<SessionData | null>
  save(session: SessionData): Promise<void>
  appendTurns(sessionId: string, turns: readonly SessionTurn[]): Promise<void>
  saveMeta(sessionId: string, meta: SessionMeta): Promise<void>
  updateStatus(sessionId: string, status: SessionStatus): Promise<void>
  list(): Promise<SessionMeta[]>
}

/** Key/value state tools keep across runs of a session (todo lists and the like). Values are JSON. */
export interface ToolStateStore {
  get(key: string): Promise<JsonObject | null>
  set(key: string, value: JsonObject): Promise<void>
  /**
   * Every value at once. A store that has it is staged by the loop: a journaled tool call reads this snapshot (taken
   * before its step), its writes are journaled with its result, and they are applied after the step resolves, in the
   * model's call order, on the first run and on every replay alike. Restate's store needs this: object state may not
   * be read or written inside a step.
   */
  snapshot?(): Promise<Record<string, JsonObject>>
}

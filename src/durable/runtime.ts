import type { JsonValue } from '../json'
import type { SessionStore, SessionTurn, ToolStateStore } from '../session/types'

/**
 * The kinds of step the loop journals. `model`: one model request (its response, usage and cost, and the
 * decision to make it). `tool`: one tool call's result. `decision`: a loop decision that depends on something
 * outside the journal (compaction, the end of a run). `interaction`: notifying an outside party of a question.
 * `clock` and `spawn` are used by runtimes and tools for their own entries.
 */
export type StepKind = 'model' | 'tool' | 'decision' | 'interaction' | 'clock' | 'spawn' | 'custom'

/**
 * A step's identity. Rules: stable across processes (built only from the run id, the turn number, the kind and
 * the tool call id, never from time or randomness), unique within a run, and at most 200 characters.
 * `name` is the journal entry name, e.g. `run_1_ab12cd34/t3/tool/toolu_01`.
 */
export interface StepKey {
  readonly runId: string
  readonly kind: StepKind
  readonly name: string
}

/** How an awakeable wait ended: the value someone resolved it with, or the deadline passed first. */
export type AwakeableOutcome<T> = { timedOut: false; value: T } | { timedOut: true }

/**
 * An awakeable: a durable promise with an id that someone outside resolves with `resolveAwakeable(id, value)`.
 * Send the id out (inside a step) first, then call `wait()` once: on Restate the wait may only be armed after the
 * notifying step finished.
 */
export interface DurableAwakeable<T> {
  readonly id: string
  wait(): Promise<AwakeableOutcome<T>>
}

/** Behaviour defaults a runtime asks of the loop; `createAgent`'s `behavior` overrides them. */
export interface RuntimeDefaults {
  maxConcurrentTools?: number
  /**
   * Largest tool result (bytes of text, or of an image's data) the runtime journals. The loop keeps the head and the
   * tail of a larger result with a note, so one huge output can never exceed a journal's entry limit (Restate's is
   * 32 MiB). Outputs over 256 KiB go to `behavior.persistDir` first when it is set. Default: no cap.
   */
  maxToolResultBytes?: number
  /**
   * Run a turn's calls inside the next model step when every one of them is `replay: 'safe'` (and no permission
   * policy or self-journaling tool is involved): their results are journaled with that step's record, one durable
   * round trip where a step of their own would add another. A crash before the record runs them again, which is their
   * contract. Default false: each call is a step of its own.
   */
  deferSafeCalls?: boolean
}

/** The stores a runtime provides: sessions, and per-session tool state. */
export interface RuntimeStores {
  readonly session: SessionStore
  readonly toolState?: ToolStateStore
}

/** What a runtime tells a step's `execute`: whether an earlier attempt started this step and was cut off. */
export interface StepAttempt {
  readonly resumed: boolean
}

/** Session turns a step's caller appends right after the step resolves (see {@link StepOptions.sessionTurns}). */
export interface StepSessionTurns {
  readonly sessionId: string
  readonly turns: readonly SessionTurn[]
}

/** How a step's `execute` may be repeated, and what follows its result. */
export interface StepOptions<T = unknown> {
  /**
   * `execute` has an effect that must not happen twice (an unsafe tool call). The runtime must then never run it
   * fresh (`resumed: false`) after an earlier attempt may have started it, even when that attempt died right as it
   * started. A runtime that cannot tell from its journal pays for it (Restate: an intent journaled before the step,
   * `RestateRuntimeOptions.stepIntents`). Default false: a step cut off early may run again as fresh.
   */
  atMostOnce?: boolean
  /**
   * The steps whose results decided this at-most-once step (the model step whose response asked for the call, or the
   * group of calls that ran right before it), when the caller issues it right after they settled, with no durable wait
   * (an awakeable, a sleep, a call) in between. Their journaled results can then stand for this step's intent: when
   * this step's own record is missing, it never started if one of them ran in this attempt, and may have started if
   * all came from the journal. A runtime may use it to skip a separate intent record. Must be decided by the code
   * path alone, the same on every replay.
   */
  after?: readonly StepKey[]
  /**
   * The session turns that follow from this step's result, which the caller appends to its session right after the
   * step resolves, with nothing in between (the model's turn after a model step). Called once, with the value
   * `execute` returned, only when `execute` ran. A runtime may write them in the commit that records the step (SQLite:
   * the turn that asks for a call is in the file with the step, so no commit of its own is needed before the call's
   * effect), and then skips the caller's write of the same turns. The caller appends them all the same.
   */
  sessionTurns?(value: T): StepSessionTurns | undefined
}

/** A run a dead process left unfinished, as a runtime that can resume runs reports it. */
export interface InterruptedRun {
  sessionId: string
  runId: string
  /** True when the run is parked on an awakeable nobody has resolved: `'resume'` then heals instead. */
  waitingOnAwakeable: boolean
}

/**
 * Optional capability of runtimes whose journal outlives the process (SQLite, the in-memory test journal):
 * claiming runs so one process at a time owns a run (fencing), and finding runs a dead process left.
 */
export interface RunLedger {
  /** Claims `runId` for this process. Throws `RunTakenOverError` if a live process owns it, unless `takeOver`. */
  claim(sessionId: string, runId: string, options?: { takeOver?: boolean }): Promise<void>
  /** Marks the run finished and releases it; its journal may be compacted. */
  release(sessionId: string, runId: string, status: string): Promise<void>
  /** The unfinished run of `sessionId` whose owner is gone, if any. */
  findInterrupted(sessionId: string): Promise<InterruptedRun | null>
  /** Every unfinished run whose owner is gone: what a daemon calls at start. */
  recoverInterruptedRuns(): Promise<InterruptedRun[]>
  /** Throws `RunTakenOverError` when another process claimed the run since this one did. */
  assertOwner(sessionId: string, runId: string): Promise<void>
  /** Records that the run stopped cleanly at a step boundary (suspend): the next process's first step is not resumed. */
  markSuspended(sessionId: string, runId: string): Promise<void>
}

/** A message a person steered into a session, as a {@link SteeringInbox} hands it to a run. */
export interface SteeredMessage {
  readonly id: string
  readonly text: string
}

/**
 * Where a run finds the messages steered into its session while it works. The loop calls `take` at every turn
 * boundary (before each model request), outside any step, on the first execution and on every replay; the messages it
 * returns become a user turn the model sees in that request. `take` must be replay-stable: a second call for the same
 * `runId` and `turn` returns exactly the messages of the first (SQLite marks them with the run and turn; on Restate
 * the call is a journaled object call), and a message is handed to one turn only.
 */
export interface SteeringInbox {
  take(request: { sessionId: string; runId: string; turn: number }): Promise<SteeredMessage[]>
}

/**
 * The durable-runtime contract: every side effect of the agent loop goes through it.
 *
 * Guarantees a runtime must give:
 * - `step(key, execute)`: on the first execution, runs `execute` and records its result (JSON only) under `key`
 *   before resolving. On any later execution of the same run (a replay after a crash), resolves with the recorded
 *   result without calling `execute`. `execute` runs iff the step is not recorded.
 * - `attempt.resumed` tells `execute` that an earlier process (or an earlier Restate attempt) had already started
 *   this very step and stopped before recording it: the call was cut off. A step that an earlier attempt never
 *   started (it suspended cleanly at a boundary before it) is not resumed. The loop turns a resumed unsafe tool call
 *   into the interrupted text; a resumed safe call runs again. With `{ atMostOnce: true }` this must hold even for
 *   an attempt that died as `execute` started (see {@link StepOptions}).
 * - The loop never lets `execute` throw except when the run is being aborted or suspended; a runtime may record a
 *   thrown error (Restate does, as a terminal failure) or not (SQLite does not, so the step runs again).
 * - Steps of one run are replayed in the order they were first executed; a runtime may refuse a replay whose keys
 *   diverge from the journal (non-determinism).
 * - `now()` and `uuid()` return the same values on replay.
 * - `all(promises)` joins promises returned by `step` (or by tools that journal themselves) that were started
 *   together; callers must not await anything else between starting them and calling `all`.
 * - `isControlError(error)` is true for errors of the runtime itself (suspension, cancellation) that must escape
 *   the loop untouched instead of becoming a tool result.
 */
export interface DurableRuntime {
  /** Short name of the implementation: `default`, `memory`, `sqlite`, `restate`. */
  readonly kind: string
  /** False for the default runtime, which records nothing. */
  readonly durable: boolean
  readonly stores: RuntimeStores
  readonly defaults: RuntimeDefaults
  /** Present on runtimes that can resume a run in a later process. */
  readonly runs?: RunLedger
  /** Present on runtimes that keep steering messages (SQLite): the loop's default {@link SteeringInbox}. */
  readonly steering?: SteeringInbox

  step<T>(key: StepKey, execute: (attempt: StepAttempt) => Promise<T>, options?: StepOptions<T>): Promise<T>
  now(): Promise<number>
  uuid(): string
  awakeable<T>(key: StepKey, options?: { timeoutMs?: number }): DurableAwakeable<T>
  resolveAwakeable(id: string, value: JsonValue): Promise<void>
  all<T>(promises: readonly Promise<T>[]): Promise<T[]>
  race<T>(promises: readonly Promise<T>[]): Promise<T>
  allSettled?<T>(promises: readonly Promise<T>[]): Promise<PromiseSettledResult<T>[]>
  sleep(ms: number): Promise<void>
  isControlError(error: unknown): boolean
}

/** Builds a step key for `runId`; `parts` are joined with `/` after the run id. */
export function stepKey(runId: string, kind: StepKind, ...parts: readonly (string | number)[]): StepKey {
  const name = [runId, ...parts.map(String), kind].join('/')
  return { runId, kind, name: name.length <= 200 ? name : name.slice(0, 200) }
}

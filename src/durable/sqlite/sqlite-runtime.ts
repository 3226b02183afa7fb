import { isZidaneError } from '../../errors/zidane-error'
import type { JsonValue } from '../../json'
import type { DurableRuntime, InterruptedRun, RunLedger, SteeringInbox, StepAttempt, StepKey, StepOptions, StepSessionTurns } from '../runtime'
import { openDatabase } from './open-database'
import { SqliteAwakeables } from './sqlite-awakeables'
import { rootRunId, SqliteJournal } from './sqlite-journal'
import { createSqliteRunLedger } from './sqlite-run-ledger'
import { createSqliteSessionStore, createSqliteToolStateStore } from './sqlite-session-store'
import { SqliteSteering } from './sqlite-steering'
import type { SteeringMessage } from './sqlite-steering'

/** Options of `createSqliteRuntime`. */
export interface SqliteRuntimeOptions {
  /** The sessions file (created when missing). */
  path: string
  /** Sync level of step commits. Default `'FULL'`: every step result survives an OS crash. */
  synchronous?: 'FULL' | 'NORMAL'
  /** How often this process renews its lease. Default 1000. */
  heartbeatMs?: number
  /** How long after its last heartbeat a process counts as gone. Default 10000. */
  leaseMs?: number
  /** Default concurrency of tool calls for agents on this runtime. */
  maxConcurrentTools?: number
  /** How long to wait for another process's write transaction. Default 5000. */
  busyTimeoutMs?: number
  /** How often a waiting awakeable checks the file for an answer from another process. Default 100. */
  awakeablePollMs?: number
  /**
   * Fold tool results into the next synced commit (one synced commit per turn) instead of committing each at once.
   * Default true. A result not committed when the process dies is lost: the call is then reported interrupted
   * (`replay` unsafe) or runs again (`replay: 'safe'`), as a call cut off in its `execute`. See docs/design/sqlite-commits.md.
   */
  foldToolResults?: boolean
  /** Called after every commit with its strength (`'durable'`: synced as `synchronous` says): for tests and benchmarks. */
  onCommit?: (strength: 'durable' | 'light') => void
}

/** The SQLite runtime: the durable contract on one file, plus the host-facing calls. */
export interface SqliteRuntime extends DurableRuntime {
  readonly kind: 'sqlite'
  readonly path: string
  /** This runtime's owner id in the run ledger. */
  readonly owner: string
  readonly runs: RunLedger
  readonly steering: SteeringInbox
  /** Every unfinished run whose process is gone: what a daemon resumes at start. */
  recoverInterruptedRuns(): Promise<InterruptedRun[]>
  /**
   * Saves a message for the session's run at once; it is delivered once: to the running run at its next turn boundary
   * (the runtime's `steering` inbox), or, when it arrives after the run's last boundary or while no run runs, as the
   * prompt of the next run (see `deliverSteering`).
   */
  steer(sessionId: string, text: string): Promise<SteeringMessage>
  /** Steering messages of the session not delivered yet. */
  pendingSteering(sessionId: string): Promise<SteeringMessage[]>
  /** Hands the undelivered messages to `runId` (the run that will carry them as its prompt). */
  takeSteering(sessionId: string, runId: string): Promise<SteeringMessage[]>
  /** Awakeables nobody answered yet (open questions and approvals). */
  pendingAwakeables(): Promise<Array<{ id: string; runId: string | null }>>
  /** Commits the buffered writes now: a light commit, synced when it carries tool results. */
  flush(): void
  /** Commits buffered writes, gives up this process's lease and closes the file. */
  close(): void
  /** Closes the file as a killed process would (buffered writes dropped, lease left to expire): for crash tests. */
  abandon(): void
}

/**
 * Creates the embedded durable runtime on an SQLite file (WAL mode, `node:sqlite`).
 *
 * One synced commit per turn: a tool step's result is not committed on its own but buffered and written in the next
 * transaction, normally the next model step's synced commit (group commit); a suspend, an awakeable wait, a sleep, a
 * steering take and the run's release commit it first, synced. The turn that follows a step's result
 * (`StepOptions.sessionTurns`: the model's turn after a model step) is written in the step's own commit, so the turn
 * that asks for a call is in the file before the call's effect (a healed run must see it) with no commit of its own.
 * Other session writes the loop buffered reach the file in an unsynced (`synchronous=NORMAL`) commit before an
 * at-most-once step's `execute` and before other steps when no folded result waits. The start marker that `attempt.resumed`
 * needs costs no commit: one line in this process's start log (`<path>-starts-<owner>`, see `StartLog`), a plain
 * `write(2)` written before `execute`; it stays live until the result is committed, so a call whose folded result a
 * crash lost is resumed (interrupted text for an unsafe call, run again for a safe one), as a call cut off in
 * `execute` is. A process crash keeps the log; an OS crash may lose its unsynced tail, so a run claimed from an owner
 * that the machine's reboot outlived treats every unrecorded at-most-once step as resumed until its own first synced
 * step commit. The why, the rejected alternatives and the figures: docs/design/sqlite-commits.md.
 */
export function createSqliteRuntime(options: SqliteRuntimeOptions): SqliteRuntime {
  const settings = { path: options.path, synchronous: options.synchronous ?? 'FULL', leaseMs: options.leaseMs ?? 10_000, onCommit: options.onCommit }
  const fold = options.foldToolResults ?? true
  const journal = new SqliteJournal(openDatabase({ path: options.path, busyTimeoutMs: options.busyTimeoutMs ?? 5000 }), settings)
  const heartbeat = setInterval(() => { try { journal.heartbeat() } catch { /* the next beat or a step reports it */ } }, options.heartbeatMs ?? 1000)
  heartbeat.unref()
  const awakeables = new SqliteAwakeables(journal, options.awakeablePollMs ?? 100)
  const steering = new SqliteSteering(journal)
  const runs = createSqliteRunLedger(journal)

  return {
    kind: 'sqlite',
    durable: true,
    path: options.path,
    owner: journal.owner,
    stores: { session: createSqliteSessionStore(journal), toolState: createSqliteToolStateStore(journal) },
    defaults: options.maxConcurrentTools === undefined ? {} : { maxConcurrentTools: options.maxConcurrentTools },
    runs,
    steering: { take: async ({ sessionId, runId, turn }) => steering.takeForTurn(sessionId, runId, turn).map(message => ({ id: String(message.id), text: message.text })) },
    step: <T>(key: StepKey, execute: (attempt: StepAttempt) => Promise<T>, stepOptions?: StepOptions<T>) => runStep(journal, key, execute, fold, stepOptions),
    now: async () => Date.now(),
    uuid: () => crypto.randomUUID(),
    awakeable: <T>(key: StepKey, awakeableOptions: { timeoutMs?: number } = {}) => awakeables.create<T>(key, awakeableOptions.timeoutMs),
    resolveAwakeable: async (id: string, value: JsonValue) => { awakeables.resolve(id, value) },
    all: promises => Promise.all(promises),
    race: promises => Promise.race(promises),
    allSettled: promises => Promise.allSettled(promises),
    sleep: ms => {
      journal.flush()
      return new Promise(resolve => setTimeout(resolve, ms))
    },
    isControlError: error => isZidaneError(error) && (error.code === 'run_taken_over' || error.code === 'sqlite_closed'),
    recoverInterruptedRuns: () => runs.recoverInterruptedRuns(),
    steer: async (sessionId, text) => steering.save(sessionId, text),
    pendingSteering: async sessionId => steering.pending(sessionId),
    takeSteering: async (sessionId, runId) => steering.take(sessionId, runId),
    pendingAwakeables: async () => awakeables.pending(),
    flush: () => { journal.flush() },
    close: () => { clearInterval(heartbeat); journal.close() },
    abandon: () => { clearInterval(heartbeat); journal.abandon() },
  }
}

async function runStep<T>(journal: SqliteJournal, key: StepKey, execute: (attempt: StepAttempt) => Promise<T>, fold: boolean, options: StepOptions<T> = {}): Promise<T> {
  journal.assertOpen()
  const root = rootRunId(key.runId)
  const recorded = journal.recordedStep(root, key.name)
  if (recorded !== undefined) return JSON.parse(recorded) as T
  const resumed = journal.wasStarted(root, key.name, options.atMostOnce === true)
  flushBeforeExecute(journal, root, options)
  // The marker goes out before the ownership check: a claimer that took the run over reads our log after its commit,
  // so either it sees this marker or our check below sees its claim (see `startedEarlier` in the run ledger).
  journal.startLog.started(root, key.name)
  journal.assertOwnerOf(key.runId)
  const value = await execute({ resumed })
  const json = JSON.stringify(value) ?? 'null'
  const recordedNow = (): void => { journal.startLog.recorded(root, key.name) }
  if (fold && key.kind === 'tool') {
    // Checked now as the commit would: a run taken over while the call ran ends here with the takeover error.
    journal.assertOwnerOf(key.runId)
    journal.deferStep(root, key.name, json, recordedNow)
    return value
  }
  const endsOsCrashWindow = journal.isAfterOsCrash(root)
  const turns = turnRowsOf(options.sessionTurns?.(value))
  journal.transaction('durable', () => {
    journal.assertOwnerOf(key.runId)
    journal.writeStep(root, key.name, json)
    if (turns) journal.writeStepTurns(turns.sessionId, turns.rows)
    if (endsOsCrashWindow) journal.endOsCrashWindow(root)
  })
  if (turns) journal.turnsCommittedWithStep(turns.sessionId, turns.rows)
  if (endsOsCrashWindow) journal.osCrashWindowEnded(root)
  recordedNow()
  return value
}

/** The session turns that follow a step (`StepOptions.sessionTurns`) as rows: turn id and JSON. */
function turnRowsOf(written: StepSessionTurns | undefined): { sessionId: string; rows: Array<readonly [string, string]> } | undefined {
  if (!written || written.turns.length === 0) return undefined
  return { sessionId: written.sessionId, rows: written.turns.map(turn => [turn.id, JSON.stringify(turn)] as const) }
}

/**
 * Session writes the loop made since the last commit (the turn this step follows) reach the file before `execute`
 * (light, no sync): a run healed after a crash in `execute` finds them. Before an at-most-once step always (the
 * model's turn that asked for the call must be in the file before its effect); before other steps only when no folded
 * tool result waits, because the writes then describe those results (the tool-result turn) and travel with them in the
 * step's synced commit.
 */
function flushBeforeExecute(journal: SqliteJournal, root: string, options: StepOptions<unknown>): void {
  if (options.atMostOnce === true || !journal.hasBufferedSteps(root)) journal.flushUnsynced()
}

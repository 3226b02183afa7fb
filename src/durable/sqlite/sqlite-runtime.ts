import { isZidaneError } from '../../errors/zidane-error'
import type { JsonValue } from '../../json'
import type { DurableRuntime, InterruptedRun, RunLedger, SteeringInbox, StepAttempt, StepKey, StepOptions } from '../runtime'
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
  /** Commits the buffered session and tool-state writes now (a light commit). */
  flush(): void
  /** Commits buffered writes, gives up this process's lease and closes the file. */
  close(): void
  /** Closes the file as a killed process would (buffered writes dropped, lease left to expire): for crash tests. */
  abandon(): void
}

/**
 * Creates the embedded durable runtime on an SQLite file (WAL mode, `node:sqlite`).
 *
 * Per step: if the loop buffered session or tool-state writes since the last commit (in an agent run: the turn the
 * step follows), one light commit (`synchronous=NORMAL`) puts them in the file before `execute`, so a run healed
 * after a crash in `execute` still has them; then `execute` runs; then one durable commit records the result. The
 * start marker that `attempt.resumed` needs costs no commit: it is one line in this process's start log
 * (`<path>-starts-<owner>`, see `StartLog`), a plain `write(2)` of about 2 µs. So a turn costs two synced commits
 * (model step, tool results) plus two light commits that carry nothing but the loop's turns; the marker rows that
 * the light commits used to insert, and the result commits to delete, are gone, and so are the light commits of
 * steps with nothing buffered (e.g. every call of a concurrent group after the first).
 *
 * Why the log is as good as a marker commit for a process crash: a SIGKILL keeps every line already written, as it
 * keeps every WAL commit. A step cut off in `execute` is resumed; a step the crashed process never reached is not,
 * even when it died between the previous commit and this step (a hook, an approval). The process that claims the
 * run reads the dead owner's log and keeps its markers in `step_starts`, where any later claimer finds them.
 *
 * Rejected alternatives: (a) no marker at all, deriving `resumed` from a replay cursor (the first unrecorded steps
 * after a crash-resume count as resumed) would record an unsafe call that never ran as interrupted whenever the
 * process died between a commit and the call, e.g. in a `model:response` hook (the crash tests refuse this, and the
 * window is a whole hook or approval, not microseconds); (b) folding the marker into the previous step's result
 * commit cannot work: the runtime does not know the next step's key then, and the fact that a step began has to
 * reach the disk after the previous result and before `execute`. Dropping the light commits too would need the loop
 * to append its turns inside the steps (the runtime cannot fold writes made after a step resolved into its commit).
 *
 * OS crash (power loss): log lines are never synced, so the marker of a call in flight at an OS crash may be lost,
 * turning "resumed" into "not resumed" for that call; this is the limit the unsynced marker commit had, now also
 * when a concurrent call's synced commit came after the marker.
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
    step: <T>(key: StepKey, execute: (attempt: StepAttempt) => Promise<T>, stepOptions?: StepOptions) => runStep(journal, key, execute, fold, stepOptions),
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

async function runStep<T>(journal: SqliteJournal, key: StepKey, execute: (attempt: StepAttempt) => Promise<T>, fold: boolean, options: StepOptions = {}): Promise<T> {
  journal.assertOpen()
  const recorded = journal.recordedStep(key.name)
  if (recorded !== undefined) return JSON.parse(recorded) as T
  const root = rootRunId(key.runId)
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
  journal.transaction('durable', () => {
    journal.assertOwnerOf(key.runId)
    journal.sql('INSERT OR REPLACE INTO steps (name, run_id, value) VALUES (?, ?, ?)').run(key.name, root, json)
    if (journal.mayHaveStartRows(root)) journal.sql('DELETE FROM step_starts WHERE name = ?').run(key.name)
    if (endsOsCrashWindow) journal.endOsCrashWindow(root)
  })
  if (endsOsCrashWindow) journal.osCrashWindowEnded(root)
  recordedNow()
  return value
}

/**
 * Session writes the loop made since the last commit (the turn this step follows) reach the file before `execute`
 * (light, no sync): a run healed after a crash in `execute` finds them. Before an at-most-once step always (the
 * model's turn that asked for the call must be in the file before its effect); before other steps only when no folded
 * tool result waits, because the writes then describe those results (the tool-result turn) and travel with them in the
 * step's synced commit.
 */
function flushBeforeExecute(journal: SqliteJournal, root: string, options: StepOptions): void {
  if (options.atMostOnce === true || !journal.hasBufferedSteps(root)) journal.flushUnsynced()
}

import type { DatabaseSync, StatementSync } from 'node:sqlite'
import { hostname, uptime } from 'node:os'
import { DurableError, RunTakenOverError } from '../../errors/zidane-error'
import { FileVersion } from './file-version'
import { toDurableError } from './open-database'
import { StartLog, startLogPath } from './start-log'
import { isProcessAlive } from '../process-alive'

/** Owners of live runtimes in this process: an owner row with our pid that is not here belongs to a closed or abandoned runtime. */
const liveLocalOwners = new Set<string>()

/**
 * A write buffered for the next transaction: one the loop made between steps (`sessionId` lets fencing drop it), or
 * a folded step result (`step`), whose `committed` runs once the transaction that carried it committed.
 */
interface PendingWrite { sessionId: string | undefined; apply: () => void; step?: string; committed?: () => void }

/** Settings of the journal that decide durability and liveness. */
export interface JournalSettings {
  path: string
  synchronous: 'FULL' | 'NORMAL'
  leaseMs: number
  /** Called after every commit with its strength: a diagnostics hook (tests and the bench count commits per turn). */
  onCommit?: ((strength: 'durable' | 'light') => void) | undefined
}

/**
 * `runs.suspended_cleanly` of a run claimed after an OS crash whose attempt has not committed a step yet: the next
 * claimer keeps treating its unrecorded at-most-once steps as possibly started (1 is a clean suspend, 0 neither).
 */
export const OS_CRASH_WINDOW = 2

/** A run's id before the first `.`: child runs (`<run>.<callId>`) belong to their root run. */
export function rootRunId(runId: string): string {
  const dot = runId.indexOf('.')
  return dot === -1 ? runId : runId.slice(0, dot)
}

/**
 * The open file plus this process's place in it: cached statements, transactions of two strengths, the buffer of
 * writes made between steps, the owner row and the set of sessions this runtime lost to a takeover.
 *
 * Strengths: `'durable'` commits sync the WAL (`synchronous` as configured, FULL by default); `'light'` commits run at
 * NORMAL, which under WAL survives a process crash and is synced by the next durable commit (WAL frames are
 * ordered, so a light commit is never lost while a later durable one is kept).
 */
export class SqliteJournal {
  readonly owner = crypto.randomUUID()
  private readonly statements = new Map<string, StatementSync>()
  private buffer: PendingWrite[] = []
  /** Folded step results not committed yet, by step name: what a step lookup finds before the file. */
  private readonly bufferedSteps = new Map<string, { root: string; json: string }>()
  private readonly fencedSessions = new Set<string>()
  private currentSync: string | undefined
  /** An unsynced commit carried folded step results that no synced commit has synced since. */
  private unsyncedSteps = false
  private open = true
  /** This runtime's step start markers (see `StartLog`). */
  readonly startLog: StartLog
  /**
   * Root runs this runtime claimed, each with the steps earlier attempts started and did not record (empty for a
   * fresh run or one that suspended cleanly): what `wasStarted` answers from, without a query.
   */
  private readonly claims = new Map<string, ReadonlySet<string>>()
  /**
   * Claimed roots recovering from an OS crash (see `ownerOutlivedByReboot`): until this runtime's first synced step
   * commit for the run, an unrecorded at-most-once step may have run in the window the crash lost, so it is resumed.
   */
  private readonly afterOsCrash = new Set<string>()
  /**
   * Claimed roots that had no row and no step in the file when claimed, each with the steps this runtime recorded
   * since: any other step of theirs is not in the file, so its lookup costs no query.
   */
  private readonly freshRuns = new Map<string, Set<string>>()
  /** Run ownership and session fencing read from the file, kept until another connection commits. */
  readonly fileVersion = new FileVersion(() => (this.sql('PRAGMA data_version').get() as { data_version: number }).data_version)
  private inTransaction = false
  private commitsSinceCheckpoint = 0
  /**
   * Turns a step commit wrote for its caller (`StepOptions.sessionTurns`), as `<sessionId>\n<turnId>`: the session
   * store skips the caller's write of each once (it would only repeat the row, in a commit of its own).
   */
  private readonly turnsWrittenWithSteps = new Set<string>()

  constructor(readonly db: DatabaseSync, readonly settings: JournalSettings) {
    this.startLog = new StartLog(startLogPath(settings.path, this.owner))
    this.transaction('light', () => {
      this.sql('INSERT INTO owners (owner_id, pid, host, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?)').run(this.owner, process.pid, hostname(), Date.now(), Date.now())
    })
    liveLocalOwners.add(this.owner)
  }

  /** A cached prepared statement. */
  sql(text: string): StatementSync {
    let statement = this.statements.get(text)
    if (!statement) {
      statement = this.db.prepare(text)
      this.statements.set(text, statement)
    }
    return statement
  }

  /**
   * Runs `body` in one `BEGIN IMMEDIATE` transaction after applying the buffered writes; rolls back on a throw. A
   * light transaction that carries folded step results, or comes after an unsynced one that did, is made durable, so
   * a step result reaches the disk synced before whatever made the caller commit (a suspend, a wait, the run's end);
   * `'unsynced'` is light regardless (before a step's effect, the heartbeat).
   */
  transaction<T>(strength: 'durable' | 'light' | 'unsynced', body: () => T): T {
    this.assertOpen()
    const pending = this.buffer
    const carriesSteps = pending.some(write => write.step !== undefined)
    const durable = strength === 'durable' || (strength === 'light' && (carriesSteps || this.unsyncedSteps))
    this.setSync(durable ? this.settings.synchronous : 'NORMAL')
    this.buffer = []
    try {
      this.sql('BEGIN IMMEDIATE').run()
    } catch (error) {
      this.buffer = [...pending, ...this.buffer]
      throw toDurableError(error, this.settings.path)
    }
    this.inTransaction = true
    try {
      this.fileVersion.refresh()
      this.applyPending(pending)
      const result = body()
      this.sql('COMMIT').run()
      this.commitsSinceCheckpoint += 1
      this.unsyncedSteps = durable ? false : this.unsyncedSteps || carriesSteps
      this.settings.onCommit?.(durable ? 'durable' : 'light')
      for (const write of pending) this.afterCommit(write)
      return result
    } catch (error) {
      this.sql('ROLLBACK').run()
      this.fileVersion.forgetAll()
      this.buffer = [...pending, ...this.buffer]
      throw error instanceof Error && 'errcode' in error ? toDurableError(error, this.settings.path) : error
    } finally {
      this.inTransaction = false
    }
  }

  /** Buffers a write for the next transaction. */
  defer(sessionId: string | undefined, apply: () => void): void {
    this.assertOpen()
    this.buffer.push({ sessionId, apply })
  }

  /**
   * Buffers the result of step `name` of root run `root` for the next transaction (group commit); `committed` runs
   * once it is in the file. The write is dropped when another owner holds the run by then (fencing).
   */
  deferStep(root: string, name: string, json: string, committed: () => void): void {
    this.assertOpen()
    this.bufferedSteps.set(name, { root, json })
    const apply = (): void => {
      if (this.holdsRun(root)) this.writeStep(root, name, json)
    }
    this.buffer.push({ sessionId: undefined, apply, step: name, committed })
  }

  /** Writes the result of step `name` of root run `root` (inside a transaction) and drops its earlier start row. */
  writeStep(root: string, name: string, json: string): void {
    this.freshRuns.get(root)?.add(name)
    this.sql('INSERT OR REPLACE INTO steps (run_id, name, value) VALUES (?, ?, ?)').run(root, name, json)
    if (this.mayHaveStartRows(root)) this.sql('DELETE FROM step_starts WHERE name = ?').run(name)
  }

  /** Inserts turns of `sessionId` (turn id and JSON) in append order; a turn already in the file is left as it is. */
  insertTurns(sessionId: string, rows: ReadonlyArray<readonly [string, string]>): void {
    for (const [turnId, json] of rows) this.sql('INSERT OR IGNORE INTO turns (session_id, turn_id, turn) VALUES (?, ?, ?)').run(sessionId, turnId, json)
  }

  /** Writes the turns that follow a step in the step's transaction, unless the session is fenced (as a buffered write). */
  writeStepTurns(sessionId: string, rows: ReadonlyArray<readonly [string, string]>): void {
    if (!this.isSessionFenced(sessionId)) this.insertTurns(sessionId, rows)
  }

  /** The transaction that wrote these turns with a step committed: the caller's own write of each is skipped once. */
  turnsCommittedWithStep(sessionId: string, rows: ReadonlyArray<readonly [string, string]>): void {
    for (const [turnId] of rows) this.turnsWrittenWithSteps.add(`${sessionId}\n${turnId}`)
  }

  /** Whether turn `turnId` of `sessionId` was written with a step and not asked for since (forgets it: asked once). */
  takeTurnWrittenWithStep(sessionId: string, turnId: string): boolean {
    return this.turnsWrittenWithSteps.delete(`${sessionId}\n${turnId}`)
  }

  /**
   * The recorded result of step `name` of root run `root` (JSON), from the buffer of folded results or from the
   * file; no query for a step of a fresh run that this runtime has not recorded.
   */
  recordedStep(root: string, name: string): string | undefined {
    const buffered = this.bufferedSteps.get(name)
    if (buffered !== undefined) return buffered.json
    const fresh = this.freshRuns.get(root)
    if (fresh !== undefined && !fresh.has(name)) return undefined
    return (this.sql('SELECT value FROM steps WHERE run_id = ? AND name = ?').get(root, name) as { value: string } | undefined)?.value
  }

  /** Whether folded step results of root run `root` wait in the buffer. */
  hasBufferedSteps(root: string): boolean {
    for (const step of this.bufferedSteps.values()) if (step.root === root) return true
    return false
  }

  /** Commits buffered writes now, if there are any: light, or durable when they hold folded step results. */
  flush(): void {
    if (this.buffer.length > 0) this.transaction('light', () => undefined)
  }

  /** Commits buffered writes now without a sync (before a step's effect: a process crash keeps them). */
  flushUnsynced(): void {
    if (this.buffer.length > 0) this.transaction('unsynced', () => undefined)
  }

  /** Throws `RunTakenOverError` (and stops writing the run's session) when another owner holds the run's root. */
  assertOwnerOf(runId: string): void {
    this.assertOpen()
    const root = rootRunId(runId)
    if (!this.inTransaction) this.fileVersion.refresh()
    if (this.holdsRun(root)) return
    const row = this.sql('SELECT session_id FROM runs WHERE run_id = ?').get(root) as { session_id: string }
    this.fencedSessions.add(row.session_id)
    throw new RunTakenOverError(root)
  }

  /**
   * Whether no other owner holds root run `root` (no row, or ours), as of the last `fileVersion.refresh()`: one query
   * the first time, none after until another connection commits.
   */
  private holdsRun(root: string): boolean {
    const fact = `run:${root}`
    if (this.fileVersion.holds(fact)) return true
    const row = this.sql('SELECT owner FROM runs WHERE run_id = ?').get(root) as { owner: string } | undefined
    if (row && row.owner !== this.owner) return false
    this.fileVersion.keep(fact)
    return true
  }

  /**
   * Records the claim of root run `root`, the steps earlier attempts of it started and never recorded, and whether it
   * recovers from an OS crash (`afterOsCrash`).
   */
  setClaim(root: string, startedEarlier: ReadonlySet<string>, afterOsCrash = false, fresh = false): void {
    this.claims.set(root, startedEarlier)
    if (fresh) this.freshRuns.set(root, new Set())
    else this.freshRuns.delete(root)
    if (afterOsCrash) this.afterOsCrash.add(root)
    else this.afterOsCrash.delete(root)
  }

  /** Whether `root` recovers from an OS crash and no synced step commit of this runtime ended that window yet. */
  isAfterOsCrash(root: string): boolean { return this.afterOsCrash.has(root) }

  /** Ends the OS-crash window of `root`: inside a transaction that records a step of this attempt. */
  endOsCrashWindow(root: string): void {
    this.sql(`UPDATE runs SET suspended_cleanly = 0 WHERE run_id = ? AND suspended_cleanly = ${OS_CRASH_WINDOW}`).run(root)
  }

  /** The transaction that ended `root`'s OS-crash window committed. */
  osCrashWindowEnded(root: string): void { this.afterOsCrash.delete(root) }

  /**
   * Whether `owner`'s last heartbeat is older than this machine's boot (on this host), or it ran on another host:
   * the machine may have crashed since, and then the unsynced tail of the WAL and its start log may be lost.
   * A missing owner row is a clean close (the row came before the owner's runs in the WAL, which kept the runs).
   */
  ownerOutlivedByReboot(owner: string): boolean {
    const row = this.sql('SELECT host, heartbeat_at FROM owners WHERE owner_id = ?').get(owner) as { host: string; heartbeat_at: number } | undefined
    if (!row) return false
    if (row.host !== hostname()) return true
    return row.heartbeat_at < Date.now() - uptime() * 1000
  }

  /** Forgets the claim of `root` (released or suspended): its start markers are void. */
  dropClaim(root: string): void {
    this.turnsWrittenWithSteps.clear()
    this.claims.delete(root)
    this.freshRuns.delete(root)
    this.afterOsCrash.delete(root)
    this.startLog.forget(root)
  }

  /**
   * Whether an earlier attempt started step `name` of root run `root` and did not record it: for a run this runtime
   * claimed, from the claim (no query); for a run it did not claim (direct use of `step`), from `step_starts`.
   * A step this runtime started and did not record (it threw) counts too, as in the in-memory reference runtime.
   * After an OS crash, every unrecorded at-most-once step before this attempt's first synced step commit counts.
   */
  wasStarted(root: string, name: string, atMostOnce = false): boolean {
    if (this.startLog.isLive(root, name)) return true
    if (atMostOnce && this.afterOsCrash.has(root)) return true
    const claimed = this.claims.get(root)
    if (claimed) return claimed.has(name)
    return this.sql('SELECT 1 AS started FROM step_starts WHERE name = ?').get(name) !== undefined
  }

  /** Whether `step_starts` may hold rows of `root` (markers of earlier attempts), so a recorded step must delete its own. */
  mayHaveStartRows(root: string): boolean {
    const claimed = this.claims.get(root)
    return claimed === undefined || claimed.size > 0
  }

  /** Lets this runtime write `sessionId` again (it claimed one of its runs). */
  unfence(sessionId: string): void { this.fencedSessions.delete(sessionId) }

  /**
   * Whether the owner of a run is alive: a runtime of this process that is still open, or an owner row whose lease
   * (last heartbeat + `leaseMs`) has not expired and whose pid, on this host, still exists.
   */
  isOwnerAlive(owner: string): boolean {
    if (owner === this.owner || liveLocalOwners.has(owner)) return true
    const row = this.sql('SELECT pid, host, heartbeat_at FROM owners WHERE owner_id = ?').get(owner) as { pid: number; host: string; heartbeat_at: number } | undefined
    if (!row) return false
    if (Date.now() - row.heartbeat_at > this.settings.leaseMs) return false
    if (row.host !== hostname()) return true
    if (row.pid === process.pid) return false
    return isProcessAlive(row.pid)
  }

  /**
   * Renews this owner's lease, then checkpoints the WAL (`PASSIVE`: never waits for readers) when this runtime
   * committed since the last beat: the copy into the main file and its syncs happen here, between turns or while a
   * model call is awaited, instead of inside the commit that crosses SQLite's threshold (1000 pages, which stays as
   * the net for a loop that writes more in a second). The next commit then overwrites the WAL from its start, which
   * syncs faster than a commit that grows the file.
   */
  heartbeat(): void {
    if (!this.open) return
    const wrote = this.commitsSinceCheckpoint > 0
    // Unsynced: a beat that comes while folded results wait (a long model call) puts them in the file for a process
    // crash without a sync of its own; the turn's synced commit syncs them.
    this.transaction('unsynced', () => { this.sql('UPDATE owners SET heartbeat_at = ? WHERE owner_id = ?').run(Date.now(), this.owner) })
    if (wrote) this.sql('PRAGMA wal_checkpoint(PASSIVE)').get()
    this.commitsSinceCheckpoint = 0
  }

  /** Flushes, removes the owner row (its unfinished runs become interrupted at once) and closes the file. */
  close(): void {
    if (!this.open) return
    try {
      this.transaction('durable', () => { this.sql('DELETE FROM owners WHERE owner_id = ?').run(this.owner) })
    } finally {
      this.startLog.close(true)
      this.shutdown()
    }
  }

  /** Closes the file the way a crash would: buffered writes are dropped and the owner row stays (seen as gone). */
  abandon(): void {
    this.buffer = []
    this.bufferedSteps.clear()
    this.startLog.close(false)
    this.shutdown()
  }

  assertOpen(): void {
    if (!this.open) throw new DurableError(`The SQLite runtime on ${this.settings.path} is closed.`, 'sqlite_closed')
  }

  private shutdown(): void {
    if (!this.open) return
    this.open = false
    liveLocalOwners.delete(this.owner)
    this.statements.clear()
    this.db.close()
  }

  private afterCommit(write: PendingWrite): void {
    if (write.step === undefined) return
    this.bufferedSteps.delete(write.step)
    write.committed?.()
  }

  private applyPending(pending: readonly PendingWrite[]): void {
    const fenced = new Map<string, boolean>()
    for (const write of pending) {
      if (write.sessionId !== undefined) {
        let skip = fenced.get(write.sessionId)
        if (skip === undefined) fenced.set(write.sessionId, skip = this.isSessionFenced(write.sessionId))
        if (skip) continue
      }
      write.apply()
    }
  }

  /** A session is fenced when this runtime lost one of its runs, or another live owner runs it now. */
  private isSessionFenced(sessionId: string): boolean {
    if (this.fencedSessions.has(sessionId)) return true
    const fact = `session:${sessionId}`
    if (this.fileVersion.holds(fact)) return false
    const rows = this.sql("SELECT owner FROM runs WHERE session_id = ? AND status = 'running' AND owner != ?").all(sessionId, this.owner) as Array<{ owner: string }>
    // Only "no other running owner" is kept: a live owner's lease may expire without a commit.
    if (rows.length === 0) this.fileVersion.keep(fact)
    return rows.some(row => this.isOwnerAlive(row.owner))
  }

  private setSync(level: string): void {
    if (this.currentSync === level) return
    this.sql(`PRAGMA synchronous = ${level}`).run()
    this.currentSync = level
  }
}


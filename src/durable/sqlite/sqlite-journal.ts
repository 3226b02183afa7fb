import type { DatabaseSync, StatementSync } from 'node:sqlite'
import { hostname } from 'node:os'
import { DurableError, RunTakenOverError } from '../../errors/zidane-error'
import { toDurableError } from './open-database'
import { StartLog, startLogPath } from './start-log'
import { isProcessAlive } from '../process-alive'

/** Owners of live runtimes in this process: an owner row with our pid that is not here belongs to a closed or abandoned runtime. */
const liveLocalOwners = new Set<string>()

/** A write the loop made between steps, applied inside the next transaction (`sessionId` lets fencing drop it). */
interface PendingWrite { sessionId: string | undefined; apply: () => void }

/** Settings of the journal that decide durability and liveness. */
export interface JournalSettings {
  path: string
  synchronous: 'FULL' | 'NORMAL'
  leaseMs: number
}

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
  private readonly fencedSessions = new Set<string>()
  private currentSync: string | undefined
  private open = true
  /** This runtime's step start markers (see `StartLog`). */
  readonly startLog: StartLog
  /**
   * Root runs this runtime claimed, each with the steps earlier attempts started and did not record (empty for a
   * fresh run or one that suspended cleanly): what `wasStarted` answers from, without a query.
   */
  private readonly claims = new Map<string, ReadonlySet<string>>()

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

  /** Runs `body` in one `BEGIN IMMEDIATE` transaction after applying the buffered writes; rolls back on a throw. */
  transaction<T>(strength: 'durable' | 'light', body: () => T): T {
    this.assertOpen()
    this.setSync(strength === 'durable' ? this.settings.synchronous : 'NORMAL')
    const pending = this.buffer
    this.buffer = []
    try {
      this.db.exec('BEGIN IMMEDIATE')
    } catch (error) {
      this.buffer = [...pending, ...this.buffer]
      throw toDurableError(error, this.settings.path)
    }
    try {
      this.applyPending(pending)
      const result = body()
      this.db.exec('COMMIT')
      return result
    } catch (error) {
      this.db.exec('ROLLBACK')
      this.buffer = [...pending, ...this.buffer]
      throw error instanceof Error && 'errcode' in error ? toDurableError(error, this.settings.path) : error
    }
  }

  /** Buffers a write for the next transaction. */
  defer(sessionId: string | undefined, apply: () => void): void {
    this.assertOpen()
    this.buffer.push({ sessionId, apply })
  }

  /** Commits buffered writes now (a light commit), if there are any. */
  flush(): void {
    if (this.buffer.length > 0) this.transaction('light', () => undefined)
  }

  /** Throws `RunTakenOverError` (and stops writing the run's session) when another owner holds the run's root. */
  assertOwnerOf(runId: string): void {
    const root = rootRunId(runId)
    const row = this.sql('SELECT owner, session_id FROM runs WHERE run_id = ?').get(root) as { owner: string; session_id: string } | undefined
    if (row && row.owner !== this.owner) {
      this.fencedSessions.add(row.session_id)
      throw new RunTakenOverError(root)
    }
  }

  /** Records the claim of root run `root` and the steps earlier attempts of it started and never recorded. */
  setClaim(root: string, startedEarlier: ReadonlySet<string>): void { this.claims.set(root, startedEarlier) }

  /** Forgets the claim of `root` (released or suspended): its start markers are void. */
  dropClaim(root: string): void {
    this.claims.delete(root)
    this.startLog.forget(root)
  }

  /**
   * Whether an earlier attempt started step `name` of root run `root` and did not record it: for a run this runtime
   * claimed, from the claim (no query); for a run it did not claim (direct use of `step`), from `step_starts`.
   * A step this runtime started and did not record (it threw) counts too, as in the in-memory reference runtime.
   */
  wasStarted(root: string, name: string): boolean {
    if (this.startLog.isLive(root, name)) return true
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

  /** Renews this owner's lease. */
  heartbeat(): void {
    if (!this.open) return
    this.transaction('light', () => { this.sql('UPDATE owners SET heartbeat_at = ? WHERE owner_id = ?').run(Date.now(), this.owner) })
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
    const rows = this.sql("SELECT owner FROM runs WHERE session_id = ? AND status = 'running' AND owner != ?").all(sessionId, this.owner) as Array<{ owner: string }>
    return rows.some(row => this.isOwnerAlive(row.owner))
  }

  private setSync(level: string): void {
    if (this.currentSync === level) return
    this.db.exec(`PRAGMA synchronous = ${level}`)
    this.currentSync = level
  }
}


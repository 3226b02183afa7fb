import { RunTakenOverError } from '../../errors/zidane-error'
import type { InterruptedRun, RunLedger } from '../runtime'
import { OS_CRASH_WINDOW } from './sqlite-journal'
import type { SqliteJournal } from './sqlite-journal'
import { readStartLog, removeStartLog, startLogPath } from './start-log'

interface RunRow { run_id: string; session_id: string; owner: string; status: string; suspended_cleanly: number }

/**
 * The run ledger in the file: one row per top-level run with its owner and status. A run is interrupted when it is
 * `suspended`, or `running` under an owner that is gone (see `SqliteJournal.isOwnerAlive`). Finished runs have their
 * steps, start markers and awakeables deleted on release.
 */
export function createSqliteRunLedger(journal: SqliteJournal): RunLedger {
  const interruptedOf = (row: RunRow): InterruptedRun => ({ sessionId: row.session_id, runId: row.run_id, waitingOnAwakeable: isWaiting(journal, row.run_id) })
  const isInterrupted = (row: RunRow): boolean => row.status === 'suspended' || (row.status === 'running' && !journal.isOwnerAlive(row.owner))
  return {
    async claim(sessionId, runId, options = {}) {
      let previous: RunRow | undefined
      let afterOsCrash = false
      let fresh = false
      journal.transaction('light', () => {
        const row = journal.sql('SELECT * FROM runs WHERE run_id = ?').get(runId) as RunRow | undefined
        if (row && row.status === 'running' && row.owner !== journal.owner && journal.isOwnerAlive(row.owner) && options.takeOver !== true) throw new RunTakenOverError(runId)
        previous = row
        fresh = row === undefined && journal.sql('SELECT 1 AS recorded FROM steps WHERE run_id = ? LIMIT 1').get(runId) === undefined
        afterOsCrash = row !== undefined && row.suspended_cleanly !== 1 && (row.suspended_cleanly === OS_CRASH_WINDOW || journal.ownerOutlivedByReboot(row.owner))
        if (row?.suspended_cleanly === 1) journal.sql('DELETE FROM step_starts WHERE run_id = ?').run(runId)
        else if (row) keepStarts(journal, runId, row.owner, readStartLog(startLogPath(journal.settings.path, row.owner), runId))
        const now = Date.now()
        journal.sql(`INSERT INTO runs (run_id, session_id, owner, status, suspended_cleanly, claimed_at, updated_at) VALUES (?, ?, ?, 'running', ?, ?, ?)
          ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, status = 'running', suspended_cleanly = excluded.suspended_cleanly, claimed_at = excluded.claimed_at, updated_at = excluded.updated_at`).run(runId, sessionId, journal.owner, afterOsCrash ? OS_CRASH_WINDOW : 0, now, now)
      })
      journal.unfence(sessionId)
      journal.startLog.forget(runId)
      journal.setClaim(runId, previous && previous.suspended_cleanly !== 1 ? startedEarlier(journal, runId, previous.owner) : new Set(), afterOsCrash, fresh)
    },
    async release(_sessionId, runId, status) {
      const owner = journal.transaction('durable', () => {
        const row = journal.sql('SELECT * FROM runs WHERE run_id = ?').get(runId) as RunRow | undefined
        if (!row || (row.owner !== journal.owner && journal.isOwnerAlive(row.owner))) return undefined
        journal.sql('UPDATE runs SET status = ?, updated_at = ? WHERE run_id = ?').run(status, Date.now(), runId)
        if (status !== 'suspended') compact(journal, runId)
        return row.owner
      })
      journal.dropClaim(runId)
      if (owner !== undefined && owner !== journal.owner) removeLogIfUnneeded(journal, owner, runId)
    },
    async findInterrupted(sessionId) {
      const rows = journal.sql("SELECT * FROM runs WHERE session_id = ? AND status IN ('running', 'suspended') ORDER BY claimed_at DESC").all(sessionId) as unknown as RunRow[]
      const row = rows.find(isInterrupted)
      return row ? interruptedOf(row) : null
    },
    async recoverInterruptedRuns() {
      const rows = journal.sql("SELECT * FROM runs WHERE status IN ('running', 'suspended') ORDER BY claimed_at").all() as unknown as RunRow[]
      return rows.filter(isInterrupted).map(interruptedOf)
    },
    async assertOwner(_sessionId, runId) { journal.assertOwnerOf(runId) },
    async markSuspended(_sessionId, runId) {
      journal.transaction('light', () => { journal.sql(`UPDATE runs SET suspended_cleanly = CASE suspended_cleanly WHEN ${OS_CRASH_WINDOW} THEN ${OS_CRASH_WINDOW} ELSE 1 END WHERE run_id = ? AND owner = ?`).run(runId, journal.owner) })
      journal.dropClaim(runId)
    },
  }
}

/** Copies start markers of `runId` read from `owner`'s start log into `step_starts`, where any later claimer finds them. */
function keepStarts(journal: SqliteJournal, runId: string, owner: string, names: readonly string[]): void {
  const now = Date.now()
  for (const name of names) journal.sql('INSERT OR IGNORE INTO step_starts (name, run_id, owner, started_at) VALUES (?, ?, ?, ?)').run(name, runId, owner, now)
}

/**
 * After the claim committed: the steps of `runId` earlier attempts started and did not record. The previous owner's
 * log is read again now, because a previous owner that is still alive (a takeover) checks its ownership after
 * writing a marker: a marker it wrote after the read inside the claim belongs to a step whose ownership check came
 * before our commit, so the step may run, and this second read (after the commit) sees the marker. Late markers are
 * kept in `step_starts` too. A dead previous owner's log is removed once no unfinished run of it is left.
 */
function startedEarlier(journal: SqliteJournal, runId: string, owner: string): Set<string> {
  const path = startLogPath(journal.settings.path, owner)
  const started = new Set((journal.sql('SELECT name FROM step_starts WHERE run_id = ?').all(runId) as Array<{ name: string }>).map(row => row.name))
  const late = readStartLog(path, runId).filter(name => !started.has(name))
  if (late.length > 0) {
    journal.transaction('light', () => { keepStarts(journal, runId, owner, late) })
    for (const name of late) started.add(name)
  }
  if (owner !== journal.owner) removeLogIfUnneeded(journal, owner, runId)
  return started
}

/** Removes the start log of `owner` when it is gone and no run of it other than `runId` is still unfinished. */
function removeLogIfUnneeded(journal: SqliteJournal, owner: string, runId: string): void {
  if (journal.isOwnerAlive(owner)) return
  const other = journal.sql("SELECT 1 AS other FROM runs WHERE owner = ? AND status = 'running' AND run_id != ? LIMIT 1").get(owner, runId)
  if (other === undefined) removeStartLog(startLogPath(journal.settings.path, owner))
}

function isWaiting(journal: SqliteJournal, runId: string): boolean {
  return journal.sql('SELECT 1 AS waiting FROM awakeables WHERE run_id = ? AND value IS NULL AND timed_out = 0 LIMIT 1').get(runId) !== undefined
}

function compact(journal: SqliteJournal, runId: string): void {
  journal.sql('DELETE FROM steps WHERE run_id = ?').run(runId)
  journal.sql('DELETE FROM step_starts WHERE run_id = ?').run(runId)
  journal.sql('DELETE FROM awakeables WHERE run_id = ?').run(runId)
}

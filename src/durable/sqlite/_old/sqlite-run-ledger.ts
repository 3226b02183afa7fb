import { RunTakenOverError } from '../../../errors/zidane-error'
import type { InterruptedRun, RunLedger } from '../../runtime'
import type { SqliteJournal } from './sqlite-journal'

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
      journal.transaction('light', () => {
        const row = journal.sql('SELECT * FROM runs WHERE run_id = ?').get(runId) as RunRow | undefined
        if (row && row.status === 'running' && row.owner !== journal.owner && journal.isOwnerAlive(row.owner) && options.takeOver !== true) throw new RunTakenOverError(runId)
        if (row?.suspended_cleanly === 1) journal.sql('DELETE FROM step_starts WHERE run_id = ?').run(runId)
        const now = Date.now()
        journal.sql(`INSERT INTO runs (run_id, session_id, owner, status, suspended_cleanly, claimed_at, updated_at) VALUES (?, ?, ?, 'running', 0, ?, ?)
          ON CONFLICT (run_id) DO UPDATE SET owner = excluded.owner, status = 'running', suspended_cleanly = 0, claimed_at = excluded.claimed_at, updated_at = excluded.updated_at`).run(runId, sessionId, journal.owner, now, now)
      })
      journal.unfence(sessionId)
    },
    async release(_sessionId, runId, status) {
      journal.transaction('durable', () => {
        const row = journal.sql('SELECT * FROM runs WHERE run_id = ?').get(runId) as RunRow | undefined
        if (!row || (row.owner !== journal.owner && journal.isOwnerAlive(row.owner))) return
        journal.sql('UPDATE runs SET status = ?, updated_at = ? WHERE run_id = ?').run(status, Date.now(), runId)
        if (status !== 'suspended') compact(journal, runId)
      })
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
      journal.transaction('light', () => { journal.sql('UPDATE runs SET suspended_cleanly = 1 WHERE run_id = ? AND owner = ?').run(runId, journal.owner) })
    },
  }
}

function isWaiting(journal: SqliteJournal, runId: string): boolean {
  return journal.sql('SELECT 1 AS waiting FROM awakeables WHERE run_id = ? AND value IS NULL AND timed_out = 0 LIMIT 1').get(runId) !== undefined
}

function compact(journal: SqliteJournal, runId: string): void {
  journal.sql('DELETE FROM steps WHERE run_id = ?').run(runId)
  journal.sql('DELETE FROM step_starts WHERE run_id = ?').run(runId)
  journal.sql('DELETE FROM awakeables WHERE run_id = ?').run(runId)
}

import type { JsonObject } from '../../json'
import type { SessionData, SessionMeta, SessionStatus, SessionStore, SessionTurn, ToolStateStore } from '../../session/types'
import type { SqliteJournal } from './sqlite-journal'

interface SessionRow { status: string; header: string }

/** A session's header row as `SessionMeta`: the status column is newer than the header when only the status changed. */
function metaOf(row: SessionRow): SessionMeta {
  return { ...(JSON.parse(row.header) as SessionMeta), status: row.status as SessionStatus }
}

/**
 * Sessions in the file: a header row (JSON without turns) and one row per turn, in append order (the file-wide
 * rowid; `UNIQUE (session_id, turn_id)`, so appending a turn twice is a no-op). Turn and status writes are buffered
 * and committed with the runtime's next transaction (a step result, the unsynced commit before a step's `execute`
 * when writes wait, or the run's release): a crash loses at most writes a replay makes again. A turn the step before
 * it already wrote (the model's turn, `StepOptions.sessionTurns`) is not written again. Header writes (run records)
 * are committed at once.
 */
export function createSqliteSessionStore(journal: SqliteJournal): SessionStore {
  const writeHeader = (meta: SessionMeta): void => {
    const header = JSON.stringify(meta)
    journal.defer(meta.id, () => {
      journal.sql(`INSERT INTO sessions (id, status, header, updated_at) VALUES (?, ?, ?, ?)
        ON CONFLICT (id) DO UPDATE SET status = excluded.status, header = excluded.header, updated_at = excluded.updated_at`).run(meta.id, meta.status, header, meta.updatedAt)
    })
    // Headers change at run start and end, not per turn: committing them now (light) keeps a run's record (its
    // prompt, limits and checkpoint) in the file even when the process dies before the run's first step.
    journal.flush()
  }
  const writeTurns = (sessionId: string, turns: readonly SessionTurn[]): void => {
    // A turn the step before it already wrote (`StepOptions.sessionTurns`) is in the file: no second write.
    const rows = turns.filter(turn => !journal.takeTurnWrittenWithStep(sessionId, turn.id)).map(turn => [turn.id, JSON.stringify(turn)] as const)
    if (rows.length > 0) journal.defer(sessionId, () => { journal.insertTurns(sessionId, rows) })
  }
  return {
    async load(sessionId) {
      journal.flush()
      const row = journal.sql('SELECT status, header FROM sessions WHERE id = ?').get(sessionId) as SessionRow | undefined
      if (!row) return null
      const turns = (journal.sql('SELECT turn FROM turns WHERE session_id = ? ORDER BY id').all(sessionId) as Array<{ turn: string }>).map(turn => JSON.parse(turn.turn) as SessionTurn)
      return { ...metaOf(row), turns } satisfies SessionData
    },
    async save(session) {
      const { turns, ...meta } = session
      writeTurns(session.id, turns)
      writeHeader(meta)
    },
    async appendTurns(sessionId, turns) { if (turns.length > 0) writeTurns(sessionId, turns) },
    async saveMeta(_sessionId, meta) { writeHeader(meta) },
    async updateStatus(sessionId, status) {
      journal.defer(sessionId, () => { journal.sql('UPDATE sessions SET status = ?, updated_at = ? WHERE id = ?').run(status, Date.now(), sessionId) })
    },
    async list() {
      journal.flush()
      const rows = journal.sql('SELECT status, header FROM sessions ORDER BY updated_at DESC').all() as unknown as SessionRow[]
      return rows.map(metaOf)
    },
  }
}

/** Tool state in the file; writes are buffered like session writes and read back through the buffer. */
export function createSqliteToolStateStore(journal: SqliteJournal): ToolStateStore {
  const pending = new Map<string, string>()
  return {
    async get(key) {
      const json = pending.get(key) ?? (journal.sql('SELECT value FROM tool_state WHERE key = ?').get(key) as { value: string } | undefined)?.value
      return json === undefined ? null : (JSON.parse(json) as JsonObject)
    },
    async set(key, value) {
      const json = JSON.stringify(value)
      pending.set(key, json)
      journal.defer(undefined, () => {
        journal.sql('INSERT INTO tool_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, json)
        if (pending.get(key) === json) pending.delete(key)
      })
    },
  }
}

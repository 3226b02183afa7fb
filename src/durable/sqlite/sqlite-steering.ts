import type { SessionMeta } from '../../session/types'
import type { SqliteJournal } from './sqlite-journal'

/** A message steered into a session's run, as saved when it arrived. */
export interface SteeringMessage {
  id: number
  sessionId: string
  text: string
  createdAt: number
}

interface SteeringRow { id: number; session_id: string; text: string; created_at: number; run_id: string | null }

/**
 * Steering messages in the file. `steer` saves a message at once (a durable commit). `takeForTurn` hands the
 * undelivered messages of a session to the running run at a turn boundary; `take` hands them to the run that will
 * carry them as its prompt once the run ended; each in one commit. A message whose carrying run never reached the
 * session (the process died before the run was saved) is handed out again, so each is delivered once.
 */
export class SqliteSteering {
  constructor(private readonly journal: SqliteJournal) {}

  save(sessionId: string, text: string): SteeringMessage {
    const createdAt = Date.now()
    this.journal.fileVersion.forget(quietFact(sessionId))
    const id = this.journal.transaction('durable', () => Number(this.journal.sql('INSERT INTO steering (session_id, text, created_at) VALUES (?, ?, ?)').run(sessionId, text, createdAt).lastInsertRowid))
    return { id, sessionId, text, createdAt }
  }

  pending(sessionId: string): SteeringMessage[] {
    this.journal.flush()
    return this.undelivered(sessionId).map(toMessage)
  }

  /**
   * Hands the undelivered messages to turn `turn` of the running run `runId` (marked `<runId>#t<turn>`), at a turn
   * boundary. Replay-stable: once a turn took messages, taking for it again returns exactly those. A session found
   * quiet (nothing undelivered, nothing taken for a turn) stays quiet until a steering write: this runtime's own, or
   * a commit of another connection (`PRAGMA data_version`), so a boundary with nothing waiting costs one pragma.
   */
  takeForTurn(sessionId: string, runId: string, turn: number): SteeringMessage[] {
    const quiet = quietFact(sessionId)
    this.journal.fileVersion.refresh()
    if (this.journal.fileVersion.holds(quiet)) return []
    const marker = `${runId}#t${turn}`
    const taken = this.journal.sql('SELECT * FROM steering WHERE session_id = ? AND run_id = ? ORDER BY id').all(sessionId, marker) as unknown as SteeringRow[]
    if (taken.length > 0) return taken.map(toMessage)
    const messages = this.take(sessionId, marker)
    if (messages.length === 0) this.journal.fileVersion.keep(quiet)
    return messages
  }

  take(sessionId: string, runId: string): SteeringMessage[] {
    if (this.undelivered(sessionId).length === 0) return []
    this.journal.fileVersion.forget(quietFact(sessionId))
    return this.journal.transaction('durable', () => {
      const rows = this.undelivered(sessionId)
      for (const row of rows) this.journal.sql('UPDATE steering SET run_id = ? WHERE id = ?').run(runId, row.id)
      return rows.map(toMessage)
    })
  }

  private undelivered(sessionId: string): SteeringRow[] {
    const rows = this.journal.sql('SELECT * FROM steering WHERE session_id = ? ORDER BY id').all(sessionId) as unknown as SteeringRow[]
    if (rows.every(row => row.run_id === null)) return rows
    // The session header must hold the runs saved so far (a new run's record may still be buffered).
    this.journal.flush()
    const header = this.journal.sql('SELECT header FROM sessions WHERE id = ?').get(sessionId) as { header: string } | undefined
    const known = new Set((header ? (JSON.parse(header.header) as SessionMeta).runs : []).map(run => run.id))
    // A mark is a run id, or `<runId>#t<turn>` for a message taken at a turn boundary of that run.
    return rows.filter(row => row.run_id === null || !known.has(row.run_id.split('#')[0] as string))
  }
}

/** The fact "this session has no steering message waiting or taken for a turn" (see `FileVersion`). */
function quietFact(sessionId: string): string {
  return `steering:${sessionId}`
}

function toMessage(row: SteeringRow): SteeringMessage {
  return { id: row.id, sessionId: row.session_id, text: row.text, createdAt: row.created_at }
}

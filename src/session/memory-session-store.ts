import { copyData } from '../durable/copy-data'
import type { SessionData, SessionMeta, SessionStatus, SessionStore, SessionTurn } from './types'

/** A `SessionStore` in process memory: for tests, the default runtime and sessions that need not outlive the process. */
export function createMemorySessionStore(): SessionStore {
  const sessions = new Map<string, SessionData>()
  /**
   * Ids of each stored turn list, keyed by the list itself: an append checks its turns against them, not a rebuilt
   * set. A save stores a new list (so its ids are collected afresh); a header write keeps the list and its ids.
   */
  const turnIds = new WeakMap<SessionTurn[], Set<string>>()
  const idsOf = (turns: SessionTurn[]): Set<string> => {
    let ids = turnIds.get(turns)
    if (!ids) turnIds.set(turns, ids = new Set(turns.map(turn => turn.id)))
    return ids
  }
  return {
    async load(sessionId) {
      const found = sessions.get(sessionId)
      return found ? copyData(found) : null
    },
    async save(session) {
      sessions.set(session.id, copyData(session))
    },
    async appendTurns(sessionId, turns) {
      const session = sessions.get(sessionId)
      if (!session) return
      // The contract lets a store keep the turns it is handed (a Session hands over its own copies): no copy here.
      keepNewTurns(session.turns, turns, idsOf(session.turns))
    },
    async saveMeta(sessionId, meta) {
      const session = sessions.get(sessionId)
      sessions.set(sessionId, { ...copyData(meta), turns: session?.turns ?? [] })
    },
    async updateStatus(sessionId, status: SessionStatus) {
      const session = sessions.get(sessionId)
      if (session) session.status = status
    },
    async list(): Promise<SessionMeta[]> {
      return [...sessions.values()].map(({ turns: _turns, ...meta }) => copyData(meta))
    },
  }
}

function keepNewTurns(target: SessionTurn[], turns: readonly SessionTurn[], known: Set<string>): void {
  for (const turn of turns) {
    if (known.has(turn.id)) continue
    known.add(turn.id)
    target.push(turn)
  }
}

/**
 * Appends copies of the turns whose ids are not in `target` yet, in order: the idempotent append every store promises. `known`
 * holds the ids of `target`'s turns (a store that keeps it between appends passes it, and it is updated); without it
 * the ids are collected from `target`.
 */
export function appendNewTurns(target: SessionTurn[], turns: readonly SessionTurn[], known: Set<string> = new Set(target.map(turn => turn.id))): void {
  for (const turn of turns) {
    if (known.has(turn.id)) continue
    known.add(turn.id)
    target.push(copyData(turn))
  }
}

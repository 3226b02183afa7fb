import { createDefaultRuntime } from '../durable/default-runtime'
import type { SqliteRuntime } from '../durable/sqlite/sqlite-runtime'
import type { DurableOption } from '../agent/types'
import type { StepKey } from '../durable/runtime'
import type { SessionStore } from '../session/types'
import type { Durability } from './parse-args'

/**
 * The `durable` option for a CLI run. Without a sessions file: none (in memory). `on`: resume interrupted runs first.
 * `resume-ask`: heal by default (the caller resumes after asking). `off`: sessions, the run ledger and questions are
 * kept in the file but no checkpoint is recorded, so the next run heals an interrupted one.
 */
export function buildDurable(durability: Durability, sqlite: SqliteRuntime | undefined): DurableOption | undefined {
  if (!sqlite) return undefined
  if (durability === 'on') return { runtime: sqlite, onInterrupted: 'resume' }
  if (durability === 'resume-ask') return { runtime: sqlite, onInterrupted: 'heal' }
  const toolState = sqlite.stores.toolState
  const uncheckpointed = createDefaultRuntime({ sessionStore: flushingStore(sqlite.stores.session, sqlite), ...(toolState ? { toolStateStore: toolState } : {}) })
  // The file's run ledger and questions all the same: a live run is not taken over, a dead one is healed by the next
  // run, and its questions are in the file, where `zidane answer` (any process) resolves them.
  return {
    ...uncheckpointed,
    runs: sqlite.runs,
    awakeable: <T>(key: StepKey, options?: { timeoutMs?: number }) => sqlite.awakeable<T>(key, options),
    resolveAwakeable: (id, value) => sqlite.resolveAwakeable(id, value),
    isControlError: error => sqlite.isControlError(error),
  }
}

/** Without steps nothing commits the buffered session writes, so each write is committed at once. */
function flushingStore(store: SessionStore, sqlite: SqliteRuntime): SessionStore {
  const flushAfter = <A extends unknown[]>(write: (...args: A) => Promise<void>) => async (...args: A): Promise<void> => {
    await write(...args)
    sqlite.flush()
  }
  return {
    load: sessionId => store.load(sessionId),
    list: () => store.list(),
    save: flushAfter(session => store.save(session)),
    appendTurns: flushAfter((sessionId, turns) => store.appendTurns(sessionId, turns)),
    saveMeta: flushAfter((sessionId, meta) => store.saveMeta(sessionId, meta)),
    updateStatus: flushAfter((sessionId, status) => store.updateStatus(sessionId, status)),
  }
}

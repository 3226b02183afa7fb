import type * as restate from '@restatedev/restate-sdk'
import { restateSessionStore } from 'zidane/restate'
import type { RestateSessionStoreOptions } from 'zidane/restate'
import { createMemorySessionStore, EventRecorder, recordingSessionStore } from 'zidane/session'
import type { NewSessionEvent, RecorderIdentity, SessionData, SessionMeta, SessionStore, SessionTurn } from 'zidane/session'

/** What a session store holds after a write: its turns and run records (the header's `turnCount` and `runCount`). */
export interface StoredCounts { turns: number; runs: number }

/**
 * Where a store's recorded events go. The recorder derives the same events at the same writes on every replay, so
 * what a sink journals from them is replay-stable.
 */
export interface EventSink {
  /** The events of one session write, in order, with what the store holds after it. */
  publish(events: readonly NewSessionEvent[], counts: StoredCounts): void
  /**
   * Makes what was published certain to reach the log (a journaled send; nothing when nothing is new). Call it before
   * the run waits on a person or another invocation, and after the invocation's last write, on success and failure.
   */
  flush(): void
}

/** Whether an event belongs to a turn still in progress (a tool call starting or ending), not to a turn boundary. */
export function isInTurnEvent(event: NewSessionEvent): boolean {
  return event.type === 'tool:start' || event.type === 'tool:end'
}

/** The session object's store: its paged state, the events of every write handed to `sink` with the counts after it. */
export function recordedSessionStore(ctx: restate.ObjectContext, sink: EventSink, options: RestateSessionStoreOptions = {}): SessionStore {
  const counted = countingStore(restateSessionStore(ctx, options))
  return recordingSessionStore(counted.store, new EventRecorder({ depth: 0 }), events => sink.publish(events, counted.counts()))
}

/** A sub-agent's store: in memory (the parent merges its turns when it ends), its events in the root session's log. */
export function recordedChildStore(sink: EventSink, identity: RecorderIdentity & { label: string }): SessionStore {
  const counted = countingStore(createMemorySessionStore())
  return recordingSessionStore(counted.store, new EventRecorder(identity), events => sink.publish(events, counted.counts()))
}

/**
 * `inner`, counting what it holds as its header does: turns and run records after the loaded window's offsets, a turn
 * appended again (same id) not counted twice.
 */
function countingStore(inner: SessionStore): { store: SessionStore; counts: () => StoredCounts } {
  let turns = 0
  let runs = 0
  let known = new Set<string>()
  const take = (data: SessionData | SessionMeta & { turns?: readonly SessionTurn[] }): void => {
    runs = (data.window?.runOffset ?? 0) + data.runs.length
    if (!data.turns) return
    turns = (data.window?.turnOffset ?? 0) + data.turns.length
    known = new Set(data.turns.map(turn => turn.id))
  }
  const store: SessionStore = {
    async load(sessionId) {
      const data = await inner.load(sessionId)
      if (data) take(data)
      return data
    },
    async save(session) {
      await inner.save(session)
      take(session)
    },
    async appendTurns(sessionId, fresh) {
      await inner.appendTurns(sessionId, fresh)
      for (const turn of fresh) {
        if (known.has(turn.id)) continue
        known.add(turn.id)
        turns += 1
      }
    },
    async saveMeta(sessionId, meta) {
      await inner.saveMeta(sessionId, meta)
      take(meta)
    },
    updateStatus: (sessionId, status) => inner.updateStatus(sessionId, status),
    list: () => inner.list(),
  }
  return { store, counts: () => ({ turns, runs }) }
}

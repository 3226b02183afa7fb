import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { createMemorySessionStore, createSession, EventRecorder, recordingSessionStore } from 'zidane/session'
import type { NewSessionEvent, Session, SessionRun, SessionStore, SessionTurn } from 'zidane/session'
import { endRunningRuns, FAILED_CALL_TEXT } from '../../../services/agent-object/run-endings'
import { scriptedProvider } from 'zidane/testing'
import { deriveEvents, EMPTY_CURSOR, firstRunToRead } from '../../../services/event-log/derive-events'
import type { EventCursor, SessionChanges } from '../../../contract/event-log'

/** The session's state after one write: its turns and run records, as the session object's state holds them. */
interface Snapshot { turns: SessionTurn[]; runs: SessionRun[] }

const tool = (name: string): ToolDef => ({
  spec: { name, description: name, inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
  isConcurrencySafe: true,
  execute: async input => `${name}:${String(input.text)}`,
})

/** `inner`, keeping a copy of the whole session after every write. */
function snapshotting(inner: SessionStore, snapshots: Snapshot[]): SessionStore {
  const keep = async (sessionId: string): Promise<void> => {
    const data = await inner.load(sessionId)
    if (data) snapshots.push(structuredClone({ turns: data.turns, runs: data.runs }))
  }
  return {
    load: sessionId => inner.load(sessionId),
    async save(session) { await inner.save(session); await keep(session.id) },
    async appendTurns(sessionId, turns) { await inner.appendTurns(sessionId, turns); await keep(sessionId) },
    async saveMeta(sessionId, meta) { await inner.saveMeta(sessionId, meta); await keep(sessionId) },
    updateStatus: (sessionId, status) => inner.updateStatus(sessionId, status),
    list: () => inner.list(),
  }
}

/** A session whose every write is recorded (as the session object's store records them) and snapshotted after. */
async function recordingSession(): Promise<{ session: Session; expected: NewSessionEvent[]; snapshots: Snapshot[] }> {
  const snapshots: Snapshot[] = []
  const expected: NewSessionEvent[] = []
  const store = recordingSessionStore(snapshotting(createMemorySessionStore(), snapshots), new EventRecorder({ depth: 0 }), events => expected.push(...events))
  return { session: await createSession({ id: 's', store }), expected, snapshots }
}

const tools = [tool('echo'), tool('shout'), tool('ask_user')]

/** Two runs of one session (parallel calls, a question, a plain answer), with the events its writes recorded. */
async function recordedSession(): Promise<{ expected: NewSessionEvent[]; snapshots: Snapshot[] }> {
  const { session, expected, snapshots } = await recordingSession()
  const provider = scriptedProvider([
    { text: 'two at once', toolCalls: [{ name: 'echo', input: { text: 'a' } }, { name: 'shout', input: { text: 'b' } }] },
    { text: 'asking', toolCalls: [{ name: 'ask_user', input: { question: 'colour?' } }] },
    { text: 'done' },
    { text: 'second run' },
  ])
  for (const prompt of ['first', 'second']) await createAgent({ provider, tools, session }).run({ prompt })
  return { expected, snapshots }
}

/**
 * A run killed in a tool call (its record still `running`, its call open), ended by the next invocation as the
 * services end it (the open call closed, the record `failed`), then a new run.
 */
async function killedAndHealed(): Promise<{ expected: NewSessionEvent[]; snapshots: Snapshot[] }> {
  const { session, expected, snapshots } = await recordingSession()
  await session.upsertRun({ id: 'run_killed', status: 'running', prompt: 'hang', startedAt: 1, depth: 0, baseTurnCount: 0 })
  await session.appendTurns([
    { id: 'run_killed-t0-u', runId: 'run_killed', role: 'user', content: [{ type: 'text', text: 'hang' }], createdAt: 1 },
    { id: 'run_killed-t1-a', runId: 'run_killed', role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'echo', input: { text: 'x' } }], createdAt: 2 },
  ])
  await endRunningRuns(session, { status: 'failed', reason: 'killed', endedAt: 3, text: FAILED_CALL_TEXT })
  await createAgent({ provider: scriptedProvider([{ text: 'after' }]), tools, session }).run({ prompt: 'again' })
  return { expected, snapshots }
}

/**
 * What the session's `changes` handler answers for `cursor`: the run records as `runsAt` holds them (read first), the
 * turns and counts as `turnsAt` holds them (read after, at the same state or a later one), at most `limit` new turns.
 */
function changesOf(turnsAt: Snapshot, cursor: EventCursor, limit: number, runsAt: Snapshot = turnsAt): SessionChanges {
  const runsFrom = firstRunToRead(cursor)
  const to = Math.min(turnsAt.turns.length, cursor.turns + limit)
  return { runsFrom, runs: runsAt.runs.slice(runsFrom), turns: turnsAt.turns.slice(cursor.from, to), moreTurns: to === cursor.turns + limit, turnCount: turnsAt.turns.length, runCount: turnsAt.runs.length }
}

/** Syncs the log at each write, its turns read after the next write landed, then at the end until it has caught up. */
function syncTorn(states: readonly Snapshot[], limit = 100): NewSessionEvent[] {
  const log: NewSessionEvent[] = []
  let cursor = EMPTY_CURSOR
  const sync = (changes: SessionChanges): void => {
    const derived = deriveEvents(cursor, changes)
    log.push(...derived.events)
    cursor = derived.cursor
  }
  states.forEach((state, index) => sync(changesOf(states[index + 1] ?? state, cursor, limit, state)))
  const last = states.at(-1) as Snapshot
  do sync(changesOf(last, cursor, limit)); while (cursor.turns < last.turns.length || cursor.open.length > 0)
  return log
}

/** Syncs the log at each of `states` in turn (each sync reads pages until it has caught up), collecting its events. */
function syncAt(states: readonly Snapshot[], limit = 100): NewSessionEvent[] {
  const log: NewSessionEvent[] = []
  let cursor = EMPTY_CURSOR
  for (const state of states) {
    for (let page = 0; page < 100; page++) {
      const changes = changesOf(state, cursor, limit)
      const derived = deriveEvents(cursor, changes)
      log.push(...derived.events)
      cursor = derived.cursor
      if (cursor.turns >= changes.turnCount) break
    }
  }
  return log
}

describe('events derived from the session state', () => {
  it('are the events the agent recorded, in its order, whichever writes the log syncs at', async () => {
    const { expected, snapshots } = await recordedSession()
    const last = snapshots.at(-1) as Snapshot
    expect(expected.map(event => event.type)).toEqual([
      'run:start', 'tool:start', 'tool:start', 'tool:end', 'tool:end', 'turn:end', 'tool:start', 'question', 'tool:end', 'turn:end', 'turn:end', 'run:end',
      'run:start', 'turn:end', 'run:end',
    ])
    expect(syncAt(snapshots)).toEqual(expected) // after every write
    expect(syncAt([last])).toEqual(expected) // once, at the end
    expect(syncAt(snapshots.filter((_, index) => index % 3 === 2).concat(last))).toEqual(expected)
    expect(syncAt(snapshots, 1)).toEqual(expected) // one turn a page
    expect(syncAt([last], 2)).toEqual(expected)
  })

  it('are the same when writes land while the log reads', async () => {
    for (const { expected, snapshots } of [await recordedSession(), await killedAndHealed()]) {
      expect(syncTorn(snapshots)).toEqual(expected)
      expect(syncTorn(snapshots, 1)).toEqual(expected)
    }
  })

  it('end a killed run after the turn that closed its open call, before the next run starts', async () => {
    const { expected, snapshots } = await killedAndHealed()
    expect(expected.map(event => event.type)).toEqual(['run:start', 'tool:start', 'tool:end', 'turn:end', 'run:end', 'run:start', 'turn:end', 'run:end'])
    expect(syncAt(snapshots)).toEqual(expected)
    expect(syncAt([snapshots.at(-1) as Snapshot])).toEqual(expected)
    expect(syncAt(snapshots, 1)).toEqual(expected)
  })

  it('leave the turns of a run whose record was not read yet, and its start, to the next read', async () => {
    const { expected, snapshots } = await recordedSession()
    const secondStarted = snapshots.findIndex(state => state.runs.length === 2)
    const before = snapshots[secondStarted - 1] as Snapshot
    const torn = deriveEvents(EMPTY_CURSOR, changesOf(snapshots.at(-1) as Snapshot, EMPTY_CURSOR, 100, before))
    expect(torn.events).toEqual(expected.slice(0, 12)) // the first run, ended
    expect(torn.cursor).toMatchObject({ turns: before.turns.length, runs: 1, open: [] })
    const rest = deriveEvents(torn.cursor, changesOf(snapshots.at(-1) as Snapshot, torn.cursor, 100))
    expect(rest.events).toEqual(expected.slice(12))
  })

  it('keeps a run open until the page that reaches its last turn, and reads again the turn of a call still open', async () => {
    const { expected, snapshots } = await recordedSession()
    const firstRunEnded = snapshots.findIndex(state => state.runs[0]?.endedAt !== undefined)
    const state = snapshots[firstRunEnded] as Snapshot
    const page = deriveEvents(EMPTY_CURSOR, changesOf(state, EMPTY_CURSOR, 2))
    expect(page.events.map(event => event.type)).toEqual(['run:start', 'tool:start', 'tool:start'])
    expect(page.cursor).toEqual({ turns: 2, runs: 1, open: [0], from: 1 }) // turn 1 holds the open calls
    const rest = deriveEvents(page.cursor, changesOf(state, page.cursor, 100))
    expect([...page.events, ...rest.events]).toEqual(expected.slice(0, 12))
    expect(rest.cursor).toMatchObject({ open: [], runs: 1, turns: state.turns.length, from: state.turns.length })
  })
})

import { EventRecorder } from 'zidane/session'
import type { NewSessionEvent, SessionMeta, SessionRun, SessionTurn } from 'zidane/session'
import type { EventCursor, SessionChanges } from '../../contract/event-log'

/** The cursor of a log that has derived nothing yet. */
export const EMPTY_CURSOR: EventCursor = { turns: 0, runs: 0, open: [], from: 0 }

/** The run records `changes` must return for `cursor`: its open runs and every newer one. */
export function firstRunToRead(cursor: EventCursor): number {
  return Math.min(cursor.runs, ...cursor.open)
}

/** One write of the session as the derivation replays it, placed at the turn position it happened at. */
interface Step { position: number; rank: number; index: number; apply: (recorder: EventRecorder) => NewSessionEvent[] }

/**
 * The events of the session's state that the log does not hold yet, and the cursor after them. It replays the
 * session's writes to the same {@link EventRecorder} the runs use, in the order they happened: a run starts before
 * its first turn, its turns follow in order, and it ends after its last turn. A pure function of the state: the log
 * gets the same events whatever the moments it is synced at.
 *
 * `changes` read the run records before the turns, so a run read as ended has all its turns in the page, unless the
 * page stopped at the size asked for (`moreTurns`) short of the header's count: then its end waits for a later page,
 * unless a later run has started (runs of a session follow each other). Turns of a run whose record was not read (it
 * started after the records were read) wait for the next read too.
 */
export function deriveEvents(cursor: EventCursor, changes: SessionChanges): { events: NewSessionEvent[]; cursor: EventCursor } {
  const known = new Set(changes.runs.map(run => run.id))
  const fresh = readable(changes.turns.slice(cursor.turns - cursor.from), known)
  const turns = [...changes.turns.slice(0, cursor.turns - cursor.from), ...fresh]
  const end = cursor.turns + fresh.length
  // The page stopped at the size asked for, short of the turns the header counts: a run's last turns may lie past it.
  const partial = changes.moreTurns && fresh.length === changes.turns.length - (cursor.turns - cursor.from) && end < changes.turnCount
  const recorder = new EventRecorder({ depth: 0 })
  const runAt = (index: number): SessionRun | undefined => changes.runs[index - changes.runsFrom]
  const open = cursor.open.flatMap(index => { const run = runAt(index); return run ? [{ index, run }] : [] })
  recorder.seed({ runs: open.map(({ run }) => running(run)), turns: turns.slice(0, cursor.turns - cursor.from) })
  const steps: Step[] = []
  const started = new Map<number, number>()
  let runs = cursor.runs
  for (; runAt(runs); runs++) {
    const run = runAt(runs) as SessionRun
    if (!isTopLevel(run)) continue
    const position = startPosition(run, cursor, turns) ?? (partial ? undefined : end)
    if (position === undefined || position > end) break // its start belongs to a later page
    steps.push({ position, rank: 1, index: runs, apply: recorder => recorder.runEvents(meta(running(run))) })
    started.set(runs, position)
    open.push({ index: runs, run })
  }
  fresh.forEach((turn, offset) => steps.push({ position: cursor.turns + offset, rank: 2, index: offset, apply: recorder => recorder.turnEvents([turn]) }))
  const newest = Math.max(-1, ...open.map(({ index }) => index))
  const ended = open.filter(({ index, run }) => isEnded(run) && (!partial || index < newest))
  for (const { index, run } of ended) steps.push({ position: endPosition(run, started.get(index) ?? cursor.turns, cursor.from, turns), rank: 0, index, apply: recorder => recorder.runEvents(meta(run)) })
  steps.sort((left, right) => left.position - right.position || left.rank - right.rank || left.index - right.index)
  const events = steps.flatMap(step => step.apply(recorder))
  const closed = new Set(ended.map(({ index }) => index))
  const next: EventCursor = { turns: end, runs, open: open.map(({ index }) => index).filter(index => !closed.has(index)), from: firstOpenCall(turns, cursor.from, end) }
  return { events, cursor: next }
}

/** The leading `turns` whose run (or, for a sub-agent's merged turn, whose parent run) is among the records read. */
function readable(turns: readonly SessionTurn[], known: ReadonlySet<string>): SessionTurn[] {
  const stop = turns.findIndex(turn => !known.has(turn.runId.split('/')[0] ?? turn.runId))
  return stop === -1 ? [...turns] : turns.slice(0, stop)
}

/**
 * Where a new run starts: before the first turn it wrote (its `baseTurnCount`, or for a record without one its first
 * turn in the page; `undefined` when the page holds none), never before the turns already derived.
 */
function startPosition(run: SessionRun, cursor: EventCursor, turns: readonly SessionTurn[]): number | undefined {
  if (run.baseTurnCount !== undefined) return Math.max(cursor.turns, run.baseTurnCount)
  const first = turns.findIndex((turn, offset) => cursor.from + offset >= cursor.turns && ownTurn(run, turn))
  return first === -1 ? undefined : cursor.from + first
}

/** Whether `turn` was written by `run` or by one of its sub-agents (merged into the session when they ended). */
function ownTurn(run: SessionRun, turn: SessionTurn): boolean {
  return turn.runId === run.id || turn.runId.startsWith(`${run.id}/`)
}

/** A run ends after its last turn in the page (its sub-agents' merged turns included), and never before `from`. */
function endPosition(run: SessionRun, from: number, pageFrom: number, turns: readonly SessionTurn[]): number {
  let position = from
  turns.forEach((turn, offset) => {
    if (ownTurn(run, turn)) position = Math.max(position, pageFrom + offset + 1)
  })
  return position
}

/** The first turn (absolute index) of an assistant turn with a call no result has closed yet, or `end`. */
function firstOpenCall(turns: readonly SessionTurn[], from: number, end: number): number {
  const pending = new Map<string, number>()
  turns.forEach((turn, offset) => {
    for (const block of turn.content) {
      if (block.type === 'tool_use') pending.set(block.id, from + offset)
      else if (block.type === 'tool_result') pending.delete(block.toolUseId)
    }
  })
  return Math.min(end, ...pending.values())
}

function isTopLevel(run: SessionRun): boolean {
  return run.depth === 0 && !run.id.includes('/')
}

function isEnded(run: SessionRun): boolean {
  return run.status !== 'running' && run.endedAt !== undefined
}

/** The run as it was when it started. */
function running(run: SessionRun): SessionRun {
  const { endedAt: _endedAt, ...rest } = run
  return { ...rest, status: 'running' }
}

/** What the recorder reads of a run-record write: the runs. */
function meta(run: SessionRun): SessionMeta {
  return { runs: [run] } as unknown as SessionMeta
}

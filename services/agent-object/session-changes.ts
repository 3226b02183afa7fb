import * as restate from '@restatedev/restate-sdk'
import { SESSION_STATE_KEY, sessionRunStateKey, sessionTurnStateKey } from 'zidane/restate'
import type { StoredSessionHeader } from 'zidane/restate'
import type { SessionRun, SessionTurn } from 'zidane/session'
import type { SessionChanges, SessionChangesRequest } from '../../contract/event-log'
import { readState } from '../read-state'

/** Most run records and most new turns one `changes` answer holds: the log reads on from there. */
export const MAX_CHANGES = 200

/**
 * What the shared `changes` handler returns to the session's event log, read beside a running run in one round trip:
 * the run records, then the turns, then the header, issued in that order. Restate answers one invocation's reads in
 * the order they were issued, each from the state as it then is, so a run record read as ended was written after its
 * run's last turn, and those turns are in the read (up to its size); a turn of a run whose record the read did not see
 * is the log's to leave for its next read. The counts are the header's, or the keys read when they run past it (a
 * running session's header is written once per run): a doorbell's sync that was rung with the session's counts
 * is then not taken for one reading a state its write has not reached, which it would read again every 5 ms.
 */
export async function readSessionChanges(ctx: restate.ObjectSharedContext, request: SessionChangesRequest): Promise<SessionChanges> {
  const runCount = clamp(request.runs)
  const turnCount = Math.max(request.turnsFrom, request.newFrom) + clamp(request.turns) - request.turnsFrom
  const keys = [
    ...Array.from({ length: runCount }, (_, offset) => sessionRunStateKey(request.runsFrom + offset)),
    ...Array.from({ length: turnCount }, (_, offset) => sessionTurnStateKey(request.turnsFrom + offset)),
    SESSION_STATE_KEY,
  ]
  const values = await readState(ctx, keys)
  const header = values.pop() as StoredSessionHeader | null
  const runs = leading(values.slice(0, runCount)) as SessionRun[]
  const turnValues = values.slice(runCount)
  const turns = leading(turnValues) as SessionTurn[]
  // A running session writes its header once per run, so the keys read may run past its counters: they count.
  const turnsHeld = Math.max(header?.turnCount ?? 0, turns.length > 0 ? request.turnsFrom + turns.length : 0)
  const runsHeld = Math.max(header?.runCount ?? 0, runs.length > 0 ? request.runsFrom + runs.length : 0)
  return { runsFrom: request.runsFrom, runs, turns, moreTurns: turns.length === turnValues.length, turnCount: turnsHeld, runCount: runsHeld }
}

/** The values up to the first missing one (a range of state keys ends at its first missing key). */
function leading(values: readonly unknown[]): unknown[] {
  const missing = values.findIndex(value => value == null)
  return missing === -1 ? [...values] : values.slice(0, missing)
}

function clamp(count: number): number {
  return Math.min(MAX_CHANGES, Math.max(1, Math.floor(count)))
}

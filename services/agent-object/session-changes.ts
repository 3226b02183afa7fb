import * as restate from '@restatedev/restate-sdk'
import { readSessionRuns, SESSION_STATE_KEY, sessionTurnStateKey } from 'zidane/restate'
import type { StoredSessionHeader } from 'zidane/restate'
import type { SessionTurn } from 'zidane/session'
import type { SessionChanges, SessionChangesRequest } from '../../contract/event-log'
import { readState } from '../read-state'

/** Most run records and most new turns one `changes` answer holds: the log reads on from there. */
export const MAX_CHANGES = 200

/**
 * What the shared `changes` handler returns to the session's event log, read beside a running run in two round
 * trips: the run records first, then the turns with the header. A run record read as ended was written after its
 * run's last turn, so those turns are in the second read (up to its size); a turn of a run whose record the first read
 * did not see is the log's to leave for its next read.
 */
export async function readSessionChanges(ctx: restate.ObjectSharedContext, request: SessionChangesRequest): Promise<SessionChanges> {
  const runs = await readSessionRuns(ctx, request.runsFrom, request.runsFrom + clamp(request.runs), restate.RestatePromise)
  const wanted = Math.max(request.turnsFrom, request.newFrom) + clamp(request.turns) - request.turnsFrom
  // The turns and the header in one round trip.
  const values = await readState(ctx, [...Array.from({ length: wanted }, (_, offset) => sessionTurnStateKey(request.turnsFrom + offset)), SESSION_STATE_KEY])
  const header = values.pop() as StoredSessionHeader | null
  const missing = values.findIndex(value => value == null)
  const turns = (missing === -1 ? values : values.slice(0, missing)) as SessionTurn[]
  return { runsFrom: request.runsFrom, runs, turns, moreTurns: missing === -1, turnCount: header?.turnCount ?? 0, runCount: header?.runCount ?? 0 }
}

function clamp(count: number): number {
  return Math.min(MAX_CHANGES, Math.max(1, Math.floor(count)))
}

import * as restate from '@restatedev/restate-sdk'
import { readSessionHeader, readSessionRuns, readSessionTurns } from 'zidane/restate'
import type { SessionChanges, SessionChangesRequest } from '../event-log/event-log-contract'

/** Most new turns one `changes` answer holds: the log reads on from there. */
export const MAX_CHANGES_TURNS = 200

/**
 * What the shared `changes` handler returns to the session's event log: the turns and run records it asks for, read
 * beside a running run. The header is read before and after them: equal counts mean no write landed in between (every
 * turn append and run-record write rewrites the header after its own key), so they are one consistent state.
 */
export async function readSessionChanges(ctx: restate.ObjectSharedContext, request: SessionChangesRequest): Promise<SessionChanges> {
  const before = await readSessionHeader(ctx)
  if (!before) return { turnCount: 0, runCount: 0, turns: [], runsFrom: request.runsFrom, runs: [], stable: true }
  const limit = Math.min(MAX_CHANGES_TURNS, Math.max(1, Math.floor(request.limit)))
  const runs = await readSessionRuns(ctx, request.runsFrom, before.runCount, restate.RestatePromise)
  const turns = await readSessionTurns(ctx, request.turnsFrom, Math.min(before.turnCount, Math.max(request.turnsFrom, request.newFrom) + limit), restate.RestatePromise)
  const after = await readSessionHeader(ctx)
  const stable = after?.turnCount === before.turnCount && after.runCount === before.runCount
  return { turnCount: before.turnCount, runCount: before.runCount, turns, runsFrom: request.runsFrom, runs, stable }
}

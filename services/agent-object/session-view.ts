import * as restate from '@restatedev/restate-sdk'
import { emptyRunTotals, readRunningTurns, readSessionHeader, readSessionRuns, readSessionTurns } from 'zidane/restate'
import type { CurrentInvocation, PendingQuestion, SessionView, SessionViewRequest } from '../../contract/session'

/** Turns a page holds when the request names no `limit`. */
export const DEFAULT_TURN_PAGE = 50
/** Most turns one page holds. */
export const MAX_TURN_PAGE = 200
/** Run records a view lists: the latest ones. */
export const VIEW_RUNS = 20

/** Which turns a page holds: `[from, to)` of `total`, with the cursors of its neighbours. */
export function turnPage(total: number, request: SessionViewRequest): SessionView['page'] {
  const limit = Math.min(MAX_TURN_PAGE, Math.max(1, Math.floor(request.limit ?? DEFAULT_TURN_PAGE)))
  const from = request.turnsAfter === undefined ? Math.max(0, total - limit) : Math.min(total, Math.max(0, Math.floor(request.turnsAfter)))
  const to = Math.min(total, from + limit)
  return { from, to, total, limit, nextTurnsAfter: to < total ? to : null, previousTurnsAfter: from > 0 ? Math.max(0, from - limit) : null }
}

/**
 * Reads what the shared `get` handler returns: the header (one read), the latest run records, and a page of turns (one
 * read each, joined). A running session's newest turns are past its header's counter (the header is written once per
 * run, and again once 32 turns are past it): they are read on from it, a batch of keys at a time. Its cost is the
 * page's and those few keys, whatever the session's length.
 */
export async function readSessionView(ctx: restate.ObjectSharedContext, request: SessionViewRequest, pending: PendingQuestion[], invocation: CurrentInvocation | null): Promise<SessionView> {
  const header = await readSessionHeader(ctx)
  const counted = header?.turnCount ?? 0
  const runs = header ? await readSessionRuns(ctx, Math.max(0, header.runCount - VIEW_RUNS), header.runCount, restate.RestatePromise) : []
  const uncounted = header?.status === 'running' ? await readRunningTurns(ctx, counted, runs, restate.RestatePromise) : []
  const page = turnPage(counted + uncounted.length, request)
  const turns = header ? await readSessionTurns(ctx, page.from, Math.min(page.to, counted), restate.RestatePromise) : []
  turns.push(...uncounted.slice(Math.max(0, page.from - counted), Math.max(0, page.to - counted)))
  const cancelled = invocation?.status === 'cancelled'
  const view: SessionView = {
    exists: header !== null || invocation !== null,
    id: ctx.key,
    status: cancelled ? 'cancelled' : header?.status ?? (invocation ? 'running' : 'idle'),
    counts: { turns: page.total, runs: header?.runCount ?? 0 },
    usage: header?.totals ?? emptyRunTotals(),
    pending,
    turns,
    page,
    runs,
  }
  if (header) Object.assign(view, { createdAt: header.createdAt, updatedAt: header.updatedAt })
  if (invocation) view.invocation = invocation
  return view
}

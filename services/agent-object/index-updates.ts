import type * as restate from '@restatedev/restate-sdk'
import { readSessionHeader } from 'zidane/restate'
import type { StoredSessionHeader } from 'zidane/restate'
import { sessionIndexInterface } from '../../contract/interfaces'
import type { SessionIndexUpdate } from '../../contract/session-index'
import { indexedSession } from '../session-index/index-keys'

/**
 * Sends the session's change to its tenant's index (`session_index/<tenant>/update`): one journaled one-way send,
 * nothing for a key without a tenant. The index applies updates in the order the session journaled them.
 */
export function updateSessionIndex(ctx: restate.ObjectContext, update: Omit<SessionIndexUpdate, 'id'>): void {
  const indexed = indexedSession(ctx.key)
  if (indexed) ctx.sendClient(sessionIndexInterface, indexed.tenant).update({ id: indexed.id, ...update })
}

/**
 * The index update of a run's end at `endedAt` (durable time): the session's status, turns and cost from its header
 * (`held`, the one the run's store wrote last; else one state read), and no pending question (the run's end closed them).
 */
export async function indexRunEnd(ctx: restate.ObjectContext, endedAt: number, held?: StoredSessionHeader): Promise<void> {
  if (!indexedSession(ctx.key)) return
  const header = held ?? await readSessionHeader(ctx)
  updateSessionIndex(ctx, { status: header?.status ?? 'idle', lastActivityAt: endedAt, turns: header?.turnCount ?? 0, costUsd: header?.totals?.costUsd ?? 0, pending: 0 })
}

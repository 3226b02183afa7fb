import * as restate from '@restatedev/restate-sdk'
import { readSessionHeader } from 'zidane/restate'
import { sessionIndexInterface } from '../../contract/interfaces'
import type { EraseSessionRequest, EraseSessionResult } from '../../contract/session-index'
import type { CurrentInvocation, PendingQuestion } from '../../contract/session'
import { CURRENT_INVOCATION_STATE_KEY, INBOX_SERVICE, RESUMER_SERVICE } from '../../contract/session'
import { EVENTS_SERVICE } from '../../contract/event-log'
import type { EventLogObject } from '../event-log/event-log-object'
import type { InboxObject } from '../inbox/inbox-object'
import type { ResumerObject } from '../resumer/resumer-object'
import { indexedSession } from '../session-index/index-keys'
import { removeSessionWorkspaces } from '../workspace-removal'
import { ASKED_QUESTIONS_KEY, PENDING_QUESTIONS_KEY } from './pending-questions'

const Resumer: ResumerObject = { name: RESUMER_SERVICE }
const EventLog: EventLogObject = { name: EVENTS_SERVICE }
const Inbox: InboxObject = { name: INBOX_SERVICE }

/**
 * `erase` (exclusive, so it runs when no run of the session does): removes the session from Restate and the disk. Its
 * questions (open ones and the tombstones of those it asked), its event log, its inbox and its index entry are erased
 * by awaited calls, then its own state, then its workspaces (its sub-agents' included). The key can then be used again
 * from scratch. With `idleSince` (the retention's check) a session that ran since, or records a run as running, is
 * kept. Erasing a key that never ran cleans what may be left and answers `existed: false`.
 */
export async function eraseSession(ctx: restate.ObjectContext, request: EraseSessionRequest | null, workspaceRoot: string): Promise<EraseSessionResult> {
  const invocation = await ctx.get<CurrentInvocation>(CURRENT_INVOCATION_STATE_KEY)
  const existed = invocation !== null || (await readSessionHeader(ctx)) !== null
  const idleSince = request?.idleSince
  if (idleSince !== undefined && invocation && (invocation.status === 'running' || invocation.startedAt > idleSince)) return { existed, erased: false }
  const questions = await questionIds(ctx)
  const indexed = indexedSession(ctx.key)
  await restate.RestatePromise.all([
    ...questions.map(id => ctx.objectClient(Resumer, id).erase({ sessionKey: ctx.key })),
    ctx.objectClient(EventLog, ctx.key).erase(),
    ctx.objectClient(Inbox, ctx.key).erase(),
    ...(indexed ? [ctx.client(sessionIndexInterface, indexed.tenant).remove({ id: indexed.id })] : []),
  ])
  ctx.clearAll()
  await ctx.run('remove workspace', async () => { await removeSessionWorkspaces(workspaceRoot, ctx.key) })
  return { existed, erased: true }
}

/** The ids of the session's open questions and of those it asked lately (their tombstones). */
async function questionIds(ctx: restate.ObjectContext): Promise<string[]> {
  const pending = (await ctx.get<PendingQuestion[]>(PENDING_QUESTIONS_KEY)) ?? []
  const asked = (await ctx.get<string[]>(ASKED_QUESTIONS_KEY)) ?? []
  return [...new Set([...pending.map(question => question.id), ...asked])]
}

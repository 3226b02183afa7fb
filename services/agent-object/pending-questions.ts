import * as restate from '@restatedev/restate-sdk'
import type { PendingQuestion } from '../../contract/session'
import { RESUMER_SERVICE } from '../../contract/session'
import type { ResumerObject } from '../resumer/resumer-object'

/** State key of the session's open questions and approvals. Durable name: never rename. */
export const PENDING_QUESTIONS_KEY = 'pending_questions'

const Resumer: ResumerObject = { name: RESUMER_SERVICE }

/**
 * Lists a question (or approval) as pending: registered with the resumer first, and the registration awaited, so an
 * answer sent the moment it is listed is never refused; then added to the session's pending list (once).
 */
export async function listPendingQuestion(ctx: restate.ObjectContext, pending: PendingQuestion): Promise<void> {
  const { id, kind, question, createdAt, options, expiresAt } = pending
  await ctx.objectClient(Resumer, id).register({ sessionKey: ctx.key, kind, question, createdAt, ...(options ? { options } : {}), ...(expiresAt ? { expiresAt } : {}) })
  const open = (await ctx.get<PendingQuestion[]>(PENDING_QUESTIONS_KEY)) ?? []
  if (!open.some(entry => entry.id === id)) ctx.set(PENDING_QUESTIONS_KEY, [...open, pending])
}

/** Takes a question off the session's pending list once its answer arrived (or it expired). */
export async function unlistPendingQuestion(ctx: restate.ObjectContext, id: string): Promise<void> {
  const open = (await ctx.get<PendingQuestion[]>(PENDING_QUESTIONS_KEY)) ?? []
  ctx.set(PENDING_QUESTIONS_KEY, open.filter(entry => entry.id !== id))
}

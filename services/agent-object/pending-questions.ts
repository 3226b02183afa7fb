import * as restate from '@restatedev/restate-sdk'
import type { PendingQuestion } from '../../contract/session'
import { RESUMER_SERVICE } from '../../contract/session'
import type { ResumerObject } from '../resumer/resumer-object'
import { updateSessionIndex } from './index-updates'

/** State key of the session's open questions and approvals. Durable name: never rename. */
export const PENDING_QUESTIONS_KEY = 'pending_questions'
/**
 * State key of the ids of the questions the session asked, newest last, at most {@link MAX_ASKED_QUESTIONS}: the
 * resumer keeps their tombstones for a week, and the session's erase removes them. Durable name: never rename.
 */
export const ASKED_QUESTIONS_KEY = 'asked_questions'
/** Question ids the session remembers; older ones' tombstones expire by themselves (7 days). */
export const MAX_ASKED_QUESTIONS = 500

const Resumer: ResumerObject = { name: RESUMER_SERVICE }

/**
 * What one invocation of a session did to its pending questions: whether it listed one. Only the session's exclusive
 * handlers write the list, so an invocation that listed none and found none at its start (or closed them) ends with
 * none, and skips the read of the list at its end. Set on every replay alike: the listing is replayed code.
 */
export interface QuestionActivity { listed: boolean }

/** A fresh {@link QuestionActivity}: nothing listed yet. */
export function questionActivity(): QuestionActivity {
  return { listed: false }
}

/**
 * Lists a question (or approval) as pending: registered with the resumer first, and the registration awaited, so an
 * answer sent the moment it is listed is never refused; then added to the session's pending list (once), and noted in
 * the invocation's `activity`.
 */
export async function listPendingQuestion(ctx: restate.ObjectContext, pending: PendingQuestion, activity?: QuestionActivity): Promise<void> {
  if (activity) activity.listed = true
  const { id, kind, question, createdAt, options, expiresAt } = pending
  await ctx.objectClient(Resumer, id).register({ sessionKey: ctx.key, kind, question, createdAt, ...(options ? { options } : {}), ...(expiresAt ? { expiresAt } : {}) })
  const open = (await ctx.get<PendingQuestion[]>(PENDING_QUESTIONS_KEY)) ?? []
  if (open.some(entry => entry.id === id)) return
  ctx.set(PENDING_QUESTIONS_KEY, [...open, pending])
  const asked = (await ctx.get<string[]>(ASKED_QUESTIONS_KEY)) ?? []
  ctx.set(ASKED_QUESTIONS_KEY, [...asked, id].slice(-MAX_ASKED_QUESTIONS))
  updateSessionIndex(ctx, { pending: open.length + 1, lastActivityAt: createdAt })
}

/** Takes a question off the session's pending list once its answer arrived (or it expired). */
export async function unlistPendingQuestion(ctx: restate.ObjectContext, id: string): Promise<void> {
  const open = (await ctx.get<PendingQuestion[]>(PENDING_QUESTIONS_KEY)) ?? []
  const left = open.filter(entry => entry.id !== id)
  ctx.set(PENDING_QUESTIONS_KEY, left)
  if (left.length !== open.length) updateSessionIndex(ctx, { pending: left.length })
}

import * as restate from '@restatedev/restate-sdk'
import type { PendingQuestion, QuestionCloseReason } from '../../contract/session'
import { RESUMER_SERVICE } from '../../contract/session'
import type { ResumerObject } from '../resumer/resumer-object'
import { PENDING_QUESTIONS_KEY } from './pending-questions'

const Resumer: ResumerObject = { name: RESUMER_SERVICE }

/**
 * Closes every question still listed as pending (the run that asked it ended with `reason`) at the resumer, then
 * empties the list. The closes are awaited before the list is cleared, so once a session stops listing a question
 * an answer to it gets 409, never "answered" into the void. With no question open it costs one state read.
 */
export async function closeOpenQuestions(ctx: restate.ObjectContext, reason: QuestionCloseReason): Promise<void> {
  const open = (await ctx.get<PendingQuestion[]>(PENDING_QUESTIONS_KEY)) ?? []
  if (open.length === 0) return
  await restate.RestatePromise.all(open.map(question => ctx.objectClient(Resumer, question.id).close({ reason })))
  ctx.clear(PENDING_QUESTIONS_KEY)
}


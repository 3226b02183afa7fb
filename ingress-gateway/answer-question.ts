import * as clients from '@restatedev/restate-sdk-clients'
import { resumerInterface } from '../contract/interfaces'
import type { AnswerResult, QuestionCloseReason } from '../contract/session'
import { GatewayError } from './errors'
import { answeredWithin, type RestateIngress } from './restate-ingress'
import { sessionKey } from './tenancy'

/** An answer to a question: any JSON value, or an approval's decision. */
export interface QuestionAnswer { answer?: unknown; decision?: 'approve' | 'deny'; reason?: string }

/** The default of how long an answer waits for the resumer's verdict before it is answered 202 (queued in Restate). */
export const ANSWER_WAIT_MS = 5_000

const OUTCOME_ERRORS: Record<Exclude<AnswerResult['outcome'], 'answered'>, GatewayError['code']> = { unknown: 'question_not_found', already_answered: 'already_answered', expired: 'question_expired', closed: 'question_closed' }

const CLOSE_REASONS: Record<QuestionCloseReason, string> = { finished: 'its run finished', failed: 'its run failed', cancelled: 'its run was cancelled', expired: 'its deadline passed' }

/**
 * Answers question `id` through its resumer, which checks the owner (`tenant`: only its questions; undefined for an
 * answer-link token, which authorizes by itself) and that the question is open, in one call. `answered`, or `accepted`
 * when the resumer did not answer within `waitMs` (the answer stays queued in Restate); otherwise throws the
 * {@link GatewayError} of the outcome (`question_not_found`, `already_answered`, `question_expired`, `question_closed`).
 */
export async function answerQuestion(ingress: RestateIngress, id: string, { answer, decision, reason }: QuestionAnswer, tenant: string | undefined, waitMs: number): Promise<'answered' | 'accepted'> {
  const owner = tenant === undefined ? {} : { owner: sessionKey(tenant, '') }
  const answerRequest = { answer: decision === undefined ? answer : { decision, ...(reason === undefined ? {} : { reason }) }, ...owner }
  const result = await answeredWithin(waitMs, timeout => ingress.client.client(resumerInterface, id).answer(answerRequest, clients.rpc.opts(timeout)))
  if (result === undefined) return 'accepted'
  if (result.outcome === 'answered') return 'answered'
  const code = OUTCOME_ERRORS[result.outcome]
  if (code === 'question_not_found') throw questionNotFound(id)
  const why = result.outcome === 'closed' ? `: ${CLOSE_REASONS[result.reason ?? 'finished']}` : ''
  throw new GatewayError(code, `question ${id} is ${result.outcome.replace('_', ' ')}${why}`)
}

/** 404 `question_not_found` for question `id`. */
export function questionNotFound(id: string): GatewayError {
  return new GatewayError('question_not_found', `question ${id} not found`)
}

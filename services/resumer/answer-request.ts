import type { AnswerRequest } from '../contract'

/**
 * Input of `resumer/<awakeableId>/answer`. `owner`, when given, is the start every session key of the caller's tenant
 * has (`<tenant>~`): a question of another session key is answered as unknown, so an API key can neither answer nor
 * detect another tenant's questions. Without it (an answer-link token, which authorizes by itself) any owner goes.
 */
export interface OwnedAnswerRequest extends AnswerRequest {
  owner?: string
}

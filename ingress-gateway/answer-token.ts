import { createHmac, timingSafeEqual } from 'node:crypto'

/** The token of an answer link: base64url HMAC-SHA256(secret, awakeableId). Whoever holds it may answer that question. */
export function signAnswerToken(secret: string, awakeableId: string): string {
  return createHmac('sha256', secret).update(awakeableId).digest('base64url')
}

/** True when `token` is the answer token of `awakeableId`; compared in constant time. */
export function verifyAnswerToken(secret: string, awakeableId: string, token: string): boolean {
  const expected = Buffer.from(signAnswerToken(secret, awakeableId))
  const presented = Buffer.from(token)
  return presented.length === expected.length && timingSafeEqual(presented, expected)
}

/** The link a user follows to answer a pending question without an API key. */
export function answerUrl(publicUrl: string, secret: string, awakeableId: string): string {
  return `${publicUrl}/v1/awakeables/${encodeURIComponent(awakeableId)}/resolve?token=${signAnswerToken(secret, awakeableId)}`
}

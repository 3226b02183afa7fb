import { errorResponseSchema } from './errors'
import { SESSION_ID_PATTERN } from './tenancy'

/** OpenAPI security requirement of the API-key routes. */
export const bearerSecurity = [{ bearerAuth: [] }]

/** Error responses every authenticated route may give (see ERRORS.md). */
export const errorResponses = { '4xx': errorResponseSchema, '5xx': errorResponseSchema } as const

/** Schema parts of every `/v1/sessions/:sessionId/...` route: tag, API-key security, and the session id param. */
export const sessionRouteSchema = {
  tags: ['sessions'],
  security: bearerSecurity,
  params: {
    type: 'object',
    required: ['sessionId'],
    additionalProperties: false,
    properties: { sessionId: { type: 'string', pattern: SESSION_ID_PATTERN, description: 'Your id for the session: letters, digits, `_` and `-`, 1 to 128 characters.' } },
  },
} as const

/** Route params typed as {@link sessionRouteSchema} validates them. */
export interface SessionParams {
  sessionId: string
}

/** A JSON object passed through as Restate returned it (turns, runs, usage, stats). */
export const passThroughObject = { type: 'object', additionalProperties: true } as const

/** A querystring schema that allows exactly `properties`. */
export function querySchema<Properties extends Record<string, object>>(properties: Properties) {
  return { type: 'object', additionalProperties: false, properties } as const
}

/** The headers schema of a route that takes an `Idempotency-Key` (printable ASCII); `effect` says what a repeat does. */
export function idempotencyKeyHeaders(effect: string) {
  const description = `Printable ASCII. Repeating a request with the same key and body ${effect} (kept 1 day); the same key with another body gets 422 \`idempotency_key_reused\`.`
  return { type: 'object', properties: { 'idempotency-key': { type: 'string', minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7E]([\\x20-\\x7E]*[\\x21-\\x7E])?$', description } } } as const
}

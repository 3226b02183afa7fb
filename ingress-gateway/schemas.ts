import { errorResponseSchema } from './errors'
import { SESSION_ID_PATTERN } from './tenancy'

/** Params of every `/v1/sessions/:sessionId/...` route. */
export const sessionParamsSchema = {
  type: 'object',
  required: ['sessionId'],
  additionalProperties: false,
  properties: {
    sessionId: { type: 'string', pattern: SESSION_ID_PATTERN, description: 'Your id for the session: letters, digits, `_` and `-`, 1 to 128 characters.' },
  },
} as const

/** Route params typed as the schema above validates them. */
export interface SessionParams {
  sessionId: string
}

/** Error responses every authenticated route may give (see ERRORS.md). */
export const errorResponses = {
  '4xx': errorResponseSchema,
  '5xx': errorResponseSchema,
} as const

/** OpenAPI security requirement of the API-key routes. */
export const bearerSecurity = [{ bearerAuth: [] }]

/** A JSON object passed through as Restate returned it (turns, runs, usage, stats). */
export const passThroughObject = { type: 'object', additionalProperties: true } as const

/** A querystring schema that allows exactly `properties`. */
export function querySchema<Properties extends Record<string, object>>(properties: Properties) {
  return { type: 'object', additionalProperties: false, properties } as const
}

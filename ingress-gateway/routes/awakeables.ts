import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { ANSWER_WAIT_MS, answerQuestion, questionNotFound } from '../answer-question'
import { verifyAnswerToken } from '../answer-token'
import type { RouteDependencies } from '../app'
import type { GatewayAuth } from '../auth'
import { describeValidation, GatewayError } from '../errors'
import { bearerSecurity, errorResponses, querySchema } from '../schemas'

/** An answer: any JSON value (`answer`), or an approval's decision. */
interface ResolveRoute {
  Params: { id: string }
  Querystring: { token?: string }
  Body: { answer?: unknown; decision?: 'approve' | 'deny'; reason?: string }
}

/** `request.tenant` of a request authorized by an answer token instead of an API key. */
const TOKEN_HOLDER = ''

function answerStatus(status: string) {
  return { type: 'object', required: ['id', 'status'], properties: { id: { type: 'string' }, status: { type: 'string', enum: [status] } } } as const
}

const schema = {
  summary: 'Answer a pending question',
  description:
    'Resolves the question (an awakeable) the run is waiting on. Authorized either by the API key of the session, or by the `token` of the `answerUrl` ' +
    'that `GET /v1/sessions/{sessionId}` lists (no API key needed). The first answer wins. A question whose run ended (finished, failed, cancelled) ' +
    "answers 409 `question_closed`. One call to the question's resumer checks the owner and answers; while the services are down it is answered 202 after 5 s.",
  tags: ['questions'],
  security: [...bearerSecurity, {}],
  params: { type: 'object', required: ['id'], additionalProperties: false, properties: { id: { type: 'string', minLength: 1, maxLength: 512, description: 'The question id (`pending[].id`).' } } },
  querystring: querySchema({ token: { type: 'string', minLength: 1, maxLength: 128, description: "The token of the question's answerUrl." } }),
  body: {
    type: 'object',
    additionalProperties: false,
    description: 'Either `answer` (any question), or `decision` with an optional `reason` (an approval).',
    properties: {
      answer: { description: 'Any JSON value: the text for ask_user, the decision for present_plan.' },
      decision: { type: 'string', enum: ['approve', 'deny'], description: 'An approval: `approve` runs the call; `deny` gives the model an error result (with the reason).' },
      reason: { type: 'string', minLength: 1, maxLength: 2_000, description: 'Why (with `decision`); the model sees it when the call is denied.' },
    },
    // Exactly one of answer and decision: spelled with if/then/else so a refusal names the field (`body.answer is required`).
    if: { type: 'object', properties: { decision: {} }, required: ['decision'] },
    then: { properties: { answer: false } },
    else: { properties: { answer: {} }, required: ['answer'] },
    dependencies: { reason: ['decision'] },
  },
  response: {
    200: answerStatus('answered'),
    202: { description: 'The services are not running: the answer is queued in Restate and delivered when they are back.', ...answerStatus('accepted') },
    ...errorResponses,
  },
} as const

/** `POST /v1/awakeables/:id/resolve`: answer a question with an API key or an answer-link token. */
export const awakeableRoutes: FastifyPluginAsync<RouteDependencies> = async (app, { ingress, auth, config }) => {
  app.post<ResolveRoute>('/v1/awakeables/:id/resolve', { onRequest: keyOrToken(auth, config.answerSecret), schema }, async (request, reply) => {
    const { id } = request.params
    // `.` and `..` would be resolved away in the URL to Restate: no question has such an id.
    if (id === '.' || id === '..') throw questionNotFound(id)
    // The resumer checks the owner (an API key answers only its tenant's questions: another's is `unknown`) and that
    // the question is open, in one call; `accepted` when it did not answer in time (the answer stays queued in Restate).
    const tenant = request.tenant === TOKEN_HOLDER ? undefined : request.tenant
    const status = await answerQuestion(ingress, id, request.body, tenant, config.servicesWaitMs ?? ANSWER_WAIT_MS)
    if (status === 'accepted') return reply.code(202).send({ id, status })
    return { id, status }
  })
}

/**
 * A `token` in the query authorizes by itself (403 `bad_token` when wrong); without one the API key is required. The
 * query is validated first, so a repeated `token` or an unknown parameter gets 400 `invalid_request` rather than 403.
 */
function keyOrToken(auth: GatewayAuth, secret: string) {
  return async (request: FastifyRequest): Promise<void> => {
    const { token } = request.query as { token?: unknown }
    if (token === undefined) return auth.authenticate(request)
    // The route's own querystring validator, which fastify would run only after this hook.
    const validate = request.getValidationFunction('querystring')
    if (validate !== undefined && !validate(request.query)) {
      const [issue] = validate.errors ?? []
      throw new GatewayError('invalid_request', issue === undefined ? 'querystring is invalid' : describeValidation('querystring', issue))
    }
    const { id } = request.params as { id?: unknown }
    if (typeof token !== 'string' || typeof id !== 'string' || !verifyAnswerToken(secret, id, token)) {
      throw new GatewayError('bad_token', 'the answer token does not match this question')
    }
    request.tenant = TOKEN_HOLDER
  }
}

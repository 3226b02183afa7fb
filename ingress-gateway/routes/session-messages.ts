import type { FastifyPluginAsync } from 'fastify'
import { bodyFingerprint } from '../idempotency'
import { sendAdmitted } from '../run-admission'
import { bearerSecurity, errorResponses, querySchema, sessionParamsSchema, type SessionParams } from '../schemas'
import { sessionKey } from '../tenancy'
import type { RouteDependencies } from './route-dependencies'

const schema = {
  summary: 'Steer a session: add a message to its running run (or start a run)',
  description:
    'Saves the message at once (Restate keeps it durably from the 202 on, also while the services are down) and delivers it exactly once: ' +
    "to the session's running run at its next turn boundary (the model sees it as a user message in its next request; a run waiting for an " +
    'answer gets it after the answer), or, when no run takes it, as the prompt of a new run that starts when the session is idle. ' +
    "A message to a session with no run running or queued starts a run: it counts against the key's runs (429 `too_many_runs` past the cap); one to a busy session never does.",
  tags: ['sessions'],
  security: bearerSecurity,
  params: sessionParamsSchema,
  querystring: querySchema({}),
  headers: {
    type: 'object',
    properties: {
      'idempotency-key': { type: 'string', minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7E]([\\x20-\\x7E]*[\\x21-\\x7E])?$', description: 'Printable ASCII. Repeating a request with the same key and body saves the message once and answers the same id (kept 1 day); the same key with another body gets 422 `idempotency_key_reused`.' },
    },
  },
  body: {
    type: 'object',
    required: ['text'],
    additionalProperties: false,
    properties: { text: { type: 'string', minLength: 1, maxLength: 100_000 } },
  },
  response: {
    202: {
      description: 'The message is saved; it will be delivered once.',
      type: 'object',
      required: ['sessionId', 'id'],
      properties: { sessionId: { type: 'string' }, id: { type: 'string', description: 'The message id.' } },
    },
    ...errorResponses,
  },
} as const

/** `POST /v1/sessions/:sessionId/messages`: steer the session (saved at once, delivered once). */
export const sessionMessageRoutes: FastifyPluginAsync<RouteDependencies> = async (app, { restate, auth, runs }) => {
  app.post<{ Params: SessionParams; Body: { text: string }; Headers: { 'idempotency-key'?: string } }>(
    '/v1/sessions/:sessionId/messages',
    { onRequest: auth.requireApiKey, schema },
    async (request, reply) => {
      const { sessionId } = request.params
      const key = sessionKey(request.tenant, sessionId)
      const claim = { tenant: request.tenant, kind: 'steering', sessionKey: key, clientKey: request.headers['idempotency-key'], fingerprint: bodyFingerprint(request.body) } as const
      const sent = await sendAdmitted(runs, claim, idempotencyKey => restate.sendMessage(key, request.body.text, idempotencyKey))
      return reply.status(202).send({ sessionId, id: sent.invocationId })
    },
  )
}

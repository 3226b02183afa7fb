import type { FastifyPluginAsync } from 'fastify'
import { ADMISSION_WAIT_MS, admitSteering } from '../admission'
import type { RouteDependencies } from '../app'
import { idempotencyOf } from '../idempotency'
import { errorResponses, idempotencyKeyHeaders, querySchema, sessionRouteSchema, type SessionParams } from '../schemas'
import { sessionKey } from '../tenancy'

const schema = {
  summary: 'Steer a session: add a message to its running run (or start a run)',
  description:
    "Saves the message in the session's inbox through the tenant's admission (the 202 means the inbox holds it) and delivers it exactly once: " +
    "to the session's running run at its next turn boundary (the model sees it as a user message in its next request; a run waiting for an " +
    'answer gets it after the answer), or, when no run takes it, as the prompt of a new run that starts when the session is idle. ' +
    "A message to a session with no run running or queued starts a run: it counts against the key's runs (429 `too_many_runs` past the cap); one to a busy session never does. " +
    'While the services are down or restarting the message is answered 202 without `id` after 10 s: Restate keeps it and saves it when they are back.',
  ...sessionRouteSchema,
  querystring: querySchema({}),
  headers: idempotencyKeyHeaders('saves the message once and answers the same id'),
  body: { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string', minLength: 1, maxLength: 100_000 } } },
  response: {
    202: {
      description: 'The message is saved (or, without `id`, kept by Restate until the services are back); it will be delivered once.',
      type: 'object', required: ['sessionId'],
      properties: { sessionId: { type: 'string' }, id: { type: 'string', description: 'The message id; absent when the services did not answer in time.' }, note: { type: 'string' } },
    },
    ...errorResponses,
  },
} as const

const PENDING_NOTE = 'The services did not answer in time (they are down or restarting): Restate keeps the message, which is saved (or refused for the runs cap) when they are back.'

/** `POST /v1/sessions/:sessionId/messages`: steer the session (saved at once, delivered once). */
export const sessionMessageRoutes: FastifyPluginAsync<RouteDependencies> = async (app, { ingress, auth, limits, config }) => {
  app.post<{ Params: SessionParams; Body: { text: string }; Headers: { 'idempotency-key'?: string } }>('/v1/sessions/:sessionId/messages', { onRequest: auth.requireApiKey, schema }, async (request, reply) => {
    const { sessionId } = request.params
    const id = await admitSteering(ingress, request.tenant, {
      sessionKey: sessionKey(request.tenant, sessionId),
      text: request.body.text,
      maxRuns: limits.maxConcurrentRuns,
      ...idempotencyOf(request.headers['idempotency-key'], request.body),
    }, config.servicesWaitMs ?? ADMISSION_WAIT_MS)
    return reply.status(202).send(id === undefined ? { sessionId, note: PENDING_NOTE } : { sessionId, id })
  })
}

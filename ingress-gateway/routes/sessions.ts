import type { FastifyPluginAsync } from 'fastify'
import { admissionInterface } from '../../contract/admission'
import type { CurrentInvocation, PendingQuestion, SessionView, SessionViewRequest } from '../../contract/session'
import { sessionInterface } from '../../contract/interfaces'
import { answerUrl } from '../answer-token'
import { GatewayError, RestateCallError } from '../errors'
import { restateCall } from '../restate-ingress'
import type { RestateIngress } from '../restate-ingress'
import { bearerSecurity, errorResponses, passThroughObject, querySchema, sessionParamsSchema, type SessionParams } from '../schemas'
import { sessionKey } from '../tenancy'
import type { RouteDependencies } from './route-dependencies'

const pendingQuestionSchema = {
  type: 'object',
  required: ['id', 'kind', 'question', 'createdAt', 'answerUrl'],
  properties: {
    id: { type: 'string' },
    kind: { type: 'string', enum: ['ask_user', 'present_plan', 'approval'] },
    question: { type: 'string' },
    options: { type: 'array', items: { type: 'string' } },
    createdAt: { type: 'number' },
    expiresAt: { type: 'number' },
    tool: { type: 'string', description: 'The tool an approval is about (kind `approval`).' },
    input: { type: 'string', description: "That call's input as JSON text, cut to 2,000 characters (then ending with `…`)." },
    answerUrl: { type: 'string', description: 'POST `{ "answer": ... }` (an approval: `{ "decision": "approve" | "deny", "reason"?: string }`) here to answer without an API key.' },
  },
} as const

const totalsSchema = {
  type: 'object',
  description: 'Totals of every run of the session, sub-agents included in every counter.',
  required: ['usage', 'costUsd', 'modelRequests', 'toolCalls', 'turns'],
  properties: {
    usage: {
      type: 'object',
      required: ['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens'],
      properties: { inputTokens: { type: 'integer' }, outputTokens: { type: 'integer' }, cacheReadTokens: { type: 'integer' }, cacheWriteTokens: { type: 'integer' } },
    },
    costUsd: { type: 'number' },
    modelRequests: { type: 'integer' },
    toolCalls: { type: 'integer' },
    turns: { type: 'integer' },
  },
} as const

const pageSchema = {
  type: 'object',
  description: 'Which turns `turns` holds: indexes `from` to `to - 1` of `total`. Pass `nextTurnsAfter` (or `previousTurnsAfter`) as `turnsAfter` for the next (or previous) page; `null` at either end.',
  required: ['from', 'to', 'total', 'limit', 'nextTurnsAfter', 'previousTurnsAfter'],
  properties: {
    from: { type: 'integer' },
    to: { type: 'integer' },
    total: { type: 'integer' },
    limit: { type: 'integer' },
    nextTurnsAfter: { type: ['integer', 'null'] },
    previousTurnsAfter: { type: ['integer', 'null'] },
  },
} as const

const sessionSchema = {
  type: 'object',
  required: ['id', 'status', 'counts', 'usage', 'pending', 'turns', 'page', 'runs'],
  properties: {
    id: { type: 'string' },
    status: { type: 'string' },
    createdAt: { type: 'number' },
    updatedAt: { type: 'number' },
    counts: { type: 'object', required: ['turns', 'runs'], properties: { turns: { type: 'integer' }, runs: { type: 'integer' } } },
    usage: totalsSchema,
    pending: { type: 'array', items: pendingQuestionSchema },
    turns: { type: 'array', items: passThroughObject },
    page: pageSchema,
    runs: { type: 'array', description: 'The latest run records (at most 20), oldest first.', items: passThroughObject },
    invocation: {
      type: 'object',
      required: ['invocationId', 'status', 'startedAt'],
      properties: { invocationId: { type: 'string' }, status: { type: 'string' }, startedAt: { type: 'number' }, endedAt: { type: 'number' } },
    },
  },
} as const

/** `GET /v1/sessions/:sessionId` (status, turns, runs, usage, pending questions) and `POST .../cancel`. */
export const sessionRoutes: FastifyPluginAsync<RouteDependencies> = async (app, { ingress, admin, auth, config }) => {
  app.get<{ Params: SessionParams; Querystring: SessionViewRequest }>(
    '/v1/sessions/:sessionId',
    {
      onRequest: auth.requireApiKey,
      schema: {
        summary: 'Read a session',
        description:
          'The session header, usage totals (sub-agents included), pending questions, the latest runs and one page of turns: the newest page unless `turnsAfter` names one. ' +
          'A run Restate ended without letting it record its end (killed after its attempts, or by an operator) reads `status: interrupted` and `invocation.status: killed` until the next run records it failed.',
        tags: ['sessions'],
        security: bearerSecurity,
        params: sessionParamsSchema,
        querystring: querySchema({
          turnsAfter: { type: 'integer', minimum: 0, maximum: 1_000_000_000, description: 'Return the turns from this 0-based index on (the first `turnsAfter` turns are skipped). Default: the newest page.' },
          limit: { type: 'integer', minimum: 1, maximum: 200, default: 50, description: 'Turns per page.' },
        }),
        response: { 200: sessionSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { view, killed } = await readSession(ingress, request.tenant, sessionKey(request.tenant, request.params.sessionId), request.query)
      const invocation: ObservedInvocation | undefined = killed && view.invocation ? { ...view.invocation, status: 'killed' } : view.invocation
      const withLink = (question: PendingQuestion): PendingQuestion & { answerUrl: string } => ({
        ...question,
        answerUrl: answerUrl(config.publicUrl, config.answerSecret, question.id),
      })
      const { turns, runs, usage, counts, page } = view
      const status = killed ? 'interrupted' : view.status
      const stamps = view.createdAt === undefined ? {} : { createdAt: view.createdAt, updatedAt: view.updatedAt }
      return { id: request.params.sessionId, status, ...stamps, counts, usage, pending: view.pending.map(withLink), turns, page, runs, ...(invocation === undefined ? {} : { invocation }) }
    },
  )

  app.post<{ Params: SessionParams }>(
    '/v1/sessions/:sessionId/cancel',
    {
      onRequest: auth.requireApiKey,
      schema: {
        summary: "Cancel the session's running invocation",
        description:
          'Cancels the run in progress (queued prompts are not affected). Cancellation is asynchronous: the run stops at its next step. ' +
          'Accepted while the services process is down: the run stops when it is back.',
        tags: ['sessions'],
        security: bearerSecurity,
        params: sessionParamsSchema,
        querystring: querySchema({}),
        response: { 202: { type: 'object', required: ['invocationId'], properties: { invocationId: { type: 'string' } } }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const key = sessionKey(request.tenant, request.params.sessionId)
      const invocationId = await admin.sessionLockHolder(key)
      if (invocationId === undefined) {
        if ((await admin.sessionInvocationRecord(key)) === undefined) throw notFound(key)
        throw new GatewayError('nothing_running', `session ${request.params.sessionId} has no running invocation`)
      }
      try {
        await admin.cancel(invocationId)
      } catch (error) {
        if (error instanceof RestateCallError && (error.status === 404 || error.status === 409)) {
          throw new GatewayError('nothing_running', `invocation ${invocationId} already ended`)
        }
        throw error
      }
      return reply.status(202).send({ invocationId })
    },
  )
}

/** What the gateway reports of an invocation: the session's record, `killed` when Restate ended it without the run recording it. */
type ObservedInvocation = Omit<CurrentInvocation, 'status'> & { status: CurrentInvocation['status'] | 'killed' }

/**
 * The session's view (404 for a key that never ran), and whether its current invocation was killed: recorded
 * `running` while the tenant's admission saw it end with an error. The view is read again after the admission: the
 * admission learns of an end only once Restate has completed the invocation, so that view holds every state write
 * the run made, and a run it still shows `running` never recorded its end (Restate killed it after its attempts, or
 * an operator did). A read that races the end of a completed run cannot report it killed.
 */
async function readSession(ingress: RestateIngress, tenant: string, key: string, request: SessionViewRequest): Promise<{ view: SessionView; killed: boolean }> {
  const view = await existingSession(ingress, key, request)
  const current = view.invocation
  if (current?.status !== 'running') return { view, killed: false }
  // An admission that cannot answer (a deployment without it) leaves the record as the session has it.
  const failed = await restateCall(() => ingress.client.client(admissionInterface, tenant).failedRun(key)).catch((error: unknown) => {
    if (error instanceof RestateCallError) return null
    throw error
  })
  if (failed !== current.invocationId) return { view, killed: false }
  const again = await existingSession(ingress, key, request)
  return { view: again, killed: again.invocation?.status === 'running' && again.invocation.invocationId === failed }
}

/** The session's view, or 404 `session_not_found` for a key that never ran (another tenant's session included). */
async function existingSession(ingress: RestateIngress, key: string, request: SessionViewRequest): Promise<SessionView> {
  const view = await restateCall(() => ingress.client.client(sessionInterface, key).get(request))
  if (!view.exists) throw notFound(key)
  return view
}

/**
 * The session's current (or last) invocation, or 404 `session_not_found` for a key that never ran. A run records its
 * invocation before anything else, so this answers "does the session exist" without loading the session.
 */
export async function existingInvocation(ingress: RestateIngress, key: string): Promise<CurrentInvocation> {
  const invocation = await restateCall(() => ingress.client.client(sessionInterface, key).invocation())
  if (invocation === null) throw notFound(key)
  return invocation
}

function notFound(key: string): GatewayError {
  return new GatewayError('session_not_found', `session ${key.slice(key.indexOf('~') + 1)} not found`)
}

import type { FastifyPluginAsync } from 'fastify'
import { admissionInterface } from '../../contract/admission'
import type { CurrentInvocation, SessionView, SessionViewRequest } from '../../contract/session'
import { sessionInterface } from '../../contract/interfaces'
import { answerUrl } from '../answer-token'
import type { RouteDependencies } from '../app'
import { GatewayError, RestateCallError } from '../errors'
import { restateCall, type RestateIngress } from '../restate-ingress'
import { errorResponses, passThroughObject, querySchema, sessionRouteSchema, type SessionParams } from '../schemas'
import { sessionKey } from '../tenancy'

/** An object schema whose `names` are all required integers. */
function integers<const Name extends string>(names: readonly Name[]) {
  return { type: 'object', required: names, properties: Object.fromEntries(names.map((name) => [name, { type: 'integer' }])) as Record<Name, { type: 'integer' }> } as const
}

const string = { type: 'string' } as const
const number = { type: 'number' } as const
const nullableInteger = { type: ['integer', 'null'] } as const

const pendingQuestionSchema = {
  type: 'object', required: ['id', 'kind', 'question', 'createdAt', 'answerUrl'],
  properties: {
    id: string, kind: { type: 'string', enum: ['ask_user', 'present_plan', 'approval'] }, question: string, options: { type: 'array', items: string }, createdAt: number, expiresAt: number,
    tool: { type: 'string', description: 'The tool an approval is about (kind `approval`).' },
    input: { type: 'string', description: "That call's input as JSON text, cut to 2,000 characters (then ending with `…`)." },
    answerUrl: { type: 'string', description: 'POST `{ "answer": ... }` (an approval: `{ "decision": "approve" | "deny", "reason"?: string }`) here to answer without an API key.' },
  },
} as const

const sessionSchema = {
  type: 'object', required: ['id', 'status', 'counts', 'usage', 'pending', 'turns', 'page', 'runs'],
  properties: {
    id: string, status: string, createdAt: number, updatedAt: number, counts: integers(['turns', 'runs']),
    usage: {
      type: 'object', description: 'Totals of every run of the session, sub-agents included in every counter.', required: ['usage', 'costUsd', 'modelRequests', 'toolCalls', 'turns'],
      properties: { usage: integers(['inputTokens', 'outputTokens', 'cacheReadTokens', 'cacheWriteTokens']), costUsd: number, ...integers(['modelRequests', 'toolCalls', 'turns']).properties },
    },
    pending: { type: 'array', items: pendingQuestionSchema },
    turns: { type: 'array', items: passThroughObject },
    page: {
      type: 'object',
      description: 'Which turns `turns` holds: indexes `from` to `to - 1` of `total`. Pass `nextTurnsAfter` (or `previousTurnsAfter`) as `turnsAfter` for the next (or previous) page; `null` at either end.',
      required: ['from', 'to', 'total', 'limit', 'nextTurnsAfter', 'previousTurnsAfter'],
      properties: { ...integers(['from', 'to', 'total', 'limit']).properties, nextTurnsAfter: nullableInteger, previousTurnsAfter: nullableInteger },
    },
    runs: { type: 'array', description: 'The latest run records (at most 20), oldest first.', items: passThroughObject },
    invocation: { type: 'object', required: ['invocationId', 'status', 'startedAt'], properties: { invocationId: string, status: string, startedAt: number, endedAt: number } },
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
        ...sessionRouteSchema,
        querystring: querySchema({
          turnsAfter: { type: 'integer', minimum: 0, maximum: 1_000_000_000, description: 'Return the turns from this 0-based index on (the first `turnsAfter` turns are skipped). Default: the newest page.' },
          limit: { type: 'integer', minimum: 1, maximum: 200, default: 50, description: 'Turns per page.' },
        }),
        response: { 200: sessionSchema, ...errorResponses },
      },
    },
    async (request) => {
      const { view, killed } = await readSession(ingress, request.tenant, sessionKey(request.tenant, request.params.sessionId), request.query)
      const invocation = killed && view.invocation ? { ...view.invocation, status: 'killed' as const } : view.invocation
      const pending = view.pending.map((question) => ({ ...question, answerUrl: answerUrl(config.publicUrl, config.answerSecret, question.id) }))
      const { turns, runs, usage, counts, page } = view
      const stamps = view.createdAt === undefined ? {} : { createdAt: view.createdAt, updatedAt: view.updatedAt }
      return { id: request.params.sessionId, status: killed ? 'interrupted' : view.status, ...stamps, counts, usage, pending, turns, page, runs, ...(invocation === undefined ? {} : { invocation }) }
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
        ...sessionRouteSchema,
        querystring: querySchema({}),
        response: { 202: { type: 'object', required: ['invocationId'], properties: { invocationId: { type: 'string' } } }, ...errorResponses },
      },
    },
    async (request, reply) => {
      const key = sessionKey(request.tenant, request.params.sessionId)
      const invocationId = await admin.sessionLockHolder(key)
      if (invocationId === undefined) {
        if (!(await admin.sessionExists(key))) throw notFound(key)
        throw new GatewayError('nothing_running', `session ${request.params.sessionId} has no running invocation`)
      }
      await admin.cancel(invocationId).catch((error: unknown) => {
        if (error instanceof RestateCallError && (error.status === 404 || error.status === 409)) throw new GatewayError('nothing_running', `invocation ${invocationId} already ended`)
        throw error
      })
      return reply.status(202).send({ invocationId })
    },
  )
}

/**
 * The session's view (404 for a key that never ran), and whether its current invocation was killed: recorded `running`
 * while the tenant's admission saw it end with an error. The admission learns of an end only once Restate completed the
 * invocation, so a view read after it that still shows `running` never recorded its end (Restate or an operator killed it).
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

/** The session's current (or last) invocation, or 404 `session_not_found`: a run records it first, so this is "does it exist" without loading the session. */
export async function existingInvocation(ingress: RestateIngress, key: string): Promise<CurrentInvocation> {
  const invocation = await restateCall(() => ingress.client.client(sessionInterface, key).invocation())
  if (invocation === null) throw notFound(key)
  return invocation
}

function notFound(key: string): GatewayError {
  return new GatewayError('session_not_found', `session ${key.slice(key.indexOf('~') + 1)} not found`)
}

import type { FastifyPluginAsync } from 'fastify'
import type { PromptToolPolicy, SessionRunRequest, SessionRunResult } from '../../services/contract'
import { SESSION_SERVICE } from '../../services/contract'
import { watchClient } from '../client-watch'
import { GatewayError, RestateCallError } from '../errors'
import { bodyFingerprint } from '../idempotency'
import type { RestateClient } from '../restate-client'
import { objectLockHolder } from '../restate-queries'
import { sendAdmitted } from '../run-admission'
import { bearerSecurity, errorResponses, querySchema, passThroughObject, sessionParamsSchema, type SessionParams } from '../schemas'
import { sessionKey } from '../tenancy'
import type { RouteDependencies } from './route-dependencies'

interface PromptBody {
  prompt: string
  model?: string
  maxTurns?: number
  policy?: PromptToolPolicy
}

const toolList = {
  type: 'array',
  maxItems: 64,
  uniqueItems: true,
  items: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
} as const

const QUEUED_NOTE = 'Another run of this session is in progress; this prompt is queued and starts when that run ends.'

const schema = {
  summary: 'Send a prompt to a session (creating it on first use)',
  description:
    'Starts a run of the session. Runs of one session never overlap: while one runs, the next is queued (`queued: true`). With `?wait=true` the call waits for the run and returns its result. ' +
    'The prompt is accepted while the services process is down or restarting: Restate delivers it when they are back.',
  tags: ['sessions'],
  security: bearerSecurity,
  params: sessionParamsSchema,
  querystring: querySchema({ wait: { type: 'boolean', default: false, description: 'Wait for the run to end and return its result.' } }),
  headers: {
    type: 'object',
    properties: {
      'idempotency-key': { type: 'string', minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7E]([\\x20-\\x7E]*[\\x21-\\x7E])?$', description: 'Printable ASCII. Repeating a request with the same key and body starts the run only once (kept 1 day); the same key with another body gets 422 `idempotency_key_reused`.' },
    },
  },
  body: {
    type: 'object',
    required: ['prompt'],
    additionalProperties: false,
    properties: {
      prompt: { type: 'string', minLength: 1, maxLength: 100_000 },
      model: { type: 'string', minLength: 1, maxLength: 200 },
      maxTurns: { type: 'integer', minimum: 1, maximum: 500 },
      policy: {
        type: 'object',
        additionalProperties: false,
        description:
          "This run's tool policy, on top of the operator's (it can add approvals and denials, never lift the operator's): `approve` lists tools whose every call waits " +
          "for a person's approval (listed in the session's `pending` with kind `approval`), `deny` tools the run may not use (the model gets an error result).",
        properties: { approve: { ...toolList, description: 'Tool names, e.g. `shell`, `write_file`, `edit_file`, `spawn`.' }, deny: { ...toolList, description: 'Tool names.' } },
      },
    },
  },
  response: {
    200: {
      description: 'The run ended (`?wait=true`).',
      type: 'object',
      required: ['sessionId', 'invocationId', 'status', 'text', 'stats'],
      properties: { sessionId: { type: 'string' }, invocationId: { type: 'string' }, status: { type: 'string' }, text: { type: 'string' }, stats: passThroughObject },
    },
    202: {
      description: 'The run was accepted (started, or queued behind the running one).',
      type: 'object',
      required: ['sessionId', 'invocationId'],
      properties: {
        sessionId: { type: 'string' },
        invocationId: { type: 'string' },
        queued: { type: 'boolean', description: "Another run of the session holds it: this one starts when that one ends. Absent when Restate's admin API did not answer." },
        note: { type: 'string' },
      },
    },
    ...errorResponses,
  },
} as const

/** `POST /v1/sessions/:sessionId/prompts`: start (or queue) a run; optionally wait for its result. */
export const sessionPromptRoutes: FastifyPluginAsync<RouteDependencies> = async (app, { restate, auth, runs }) => {
  app.post<{ Params: SessionParams; Body: PromptBody; Querystring: { wait?: boolean }; Headers: { 'idempotency-key'?: string } }>(
    '/v1/sessions/:sessionId/prompts',
    { onRequest: auth.requireApiKey, schema },
    async (request, reply) => {
      const { sessionId } = request.params
      const key = sessionKey(request.tenant, sessionId)
      // Watched from the start: a client that leaves during the send is not waited for (the run goes on).
      const client = watchClient(reply)
      try {
        const claim = { tenant: request.tenant, kind: 'run', sessionKey: key, clientKey: request.headers['idempotency-key'], fingerprint: bodyFingerprint(request.body) } as const
        const sent = await sendAdmitted(runs, claim, idempotencyKey => restate.sendRun(key, runRequest(request.body), idempotencyKey))
        if (request.query.wait === true) {
          if (client.signal.aborted) return reply.hijack()
          const result = await attachRun(restate, sent.invocationId, client.signal)
          return reply.status(200).send({ sessionId, invocationId: sent.invocationId, status: result.status, text: result.text, stats: { ...result.stats, sessionId } })
        }
        const queued = await queuedBehindAnotherRun(restate, key, sent.invocationId)
        return reply.status(202).send({ sessionId, invocationId: sent.invocationId, ...(queued === undefined ? {} : { queued }), ...(queued === true ? { note: QUEUED_NOTE } : {}) })
      } finally {
        client.dispose()
      }
    },
  )
}

/**
 * Whether another invocation holds the session's lock, so `invocationId` waits behind it: read from Restate's tables,
 * not through a handler, so it answers while the services are down. Undefined when the admin API does not answer:
 * the prompt is accepted all the same.
 */
async function queuedBehindAnotherRun(restate: RestateClient, key: string, invocationId: string): Promise<boolean | undefined> {
  try {
    const holder = await objectLockHolder(restate, SESSION_SERVICE, key)
    return holder !== undefined && holder !== invocationId
  } catch {
    return undefined
  }
}

function runRequest(body: PromptBody): SessionRunRequest {
  return {
    prompt: body.prompt,
    eventRecording: 'outbox',
    runSettings: 'journaled',
    ...(body.model === undefined ? {} : { model: body.model }),
    ...(body.maxTurns === undefined ? {} : { maxTurns: body.maxTurns }),
    ...(body.policy === undefined ? {} : { policy: body.policy }),
  }
}

/** Waits for the run; stops waiting (the run goes on) when `abandoned` aborts: the client went away. */
async function attachRun(restate: RestateClient, invocationId: string, abandoned: AbortSignal): Promise<SessionRunResult> {
  try {
    return await restate.attach(invocationId, abandoned)
  } catch (error) {
    if (!(error instanceof RestateCallError)) throw error
    if (error.status === 409) throw new GatewayError('run_cancelled', `the run was cancelled (${error.message})`)
    if (error.source === 'invocation') throw new GatewayError('run_failed', `the run failed with ${error.status}: ${error.message}`)
    throw error
  }
}

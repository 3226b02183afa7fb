import { setTimeout as delay } from 'node:timers/promises'
import type { FastifyPluginAsync } from 'fastify'
import type { SessionRunRequest, SessionRunResult } from '../../contract/session'
import { ADMISSION_WAIT_MS, admitPrompt } from '../admission'
import { checkModel } from '../model-check'
import type { AdmissionWait } from '../admission'
import type { RouteDependencies } from '../app'
import { watchClient } from '../client-watch'
import { GatewayError, RestateCallError } from '../errors'
import { idempotencyOf } from '../idempotency'
import { heldCall, MAX_HOLD_MS } from '../restate-ingress'
import type { RestateIngress } from '../restate-ingress'
import { errorResponses, idempotencyKeyHeaders, passThroughObject, querySchema, sessionRouteSchema, type SessionParams } from '../schemas'
import { sessionKey } from '../tenancy'

const toolList = { type: 'array', maxItems: 64, uniqueItems: true, items: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } } as const

const QUEUED_NOTE = 'Another run of this session is in progress; this prompt is queued and starts when that run ends.'
const PENDING_NOTE = 'The services did not answer in time (they are down or restarting): Restate keeps the prompt, which is admitted (or refused for the runs cap) and run when they are back.'

const schema = {
  summary: 'Send a prompt to a session (creating it on first use)',
  description:
    'Starts a run of the session. Runs of one session never overlap: while one runs, the next is queued (`queued: true`). With `?wait=true` the call waits for the run and returns its result. ' +
    "The tenant's admission (a Restate object per API key) starts the run, or refuses it past the runs cap (429). The prompt is accepted while the services process is down or restarting: " +
    'after 10 s without an answer it is answered 202 without `invocationId`; Restate keeps it and admits it when they are back. ' +
    'A run that fails for good (a terminal error) is still answered 200 with `?wait=true`: the call did its job, and the body says `status: "failed"` with the `error`; a cancelled run is 409 `run_cancelled`.',
  ...sessionRouteSchema,
  querystring: querySchema({ wait: { type: 'boolean', default: false, description: 'Wait for the run to end and return its result.' } }),
  headers: idempotencyKeyHeaders('starts the run only once'),
  body: {
    type: 'object', required: ['prompt'], additionalProperties: false,
    properties: {
      prompt: { type: 'string', minLength: 1, maxLength: 100_000 },
      model: { type: 'string', minLength: 1, maxLength: 200 },
      maxTurns: { type: 'integer', minimum: 1, maximum: 500 },
      policy: {
        type: 'object', additionalProperties: false,
        description:
          "This run's tool policy, on top of the operator's (it can add approvals and denials, never lift the operator's): `approve` lists tools whose every call waits " +
          "for a person's approval (listed in the session's `pending` with kind `approval`), `deny` tools the run may not use (the model gets an error result).",
        properties: { approve: { ...toolList, description: 'Tool names, e.g. `shell`, `write_file`, `edit_file`, `spawn`.' }, deny: { ...toolList, description: 'Tool names.' } },
      },
    },
  },
  response: {
    200: {
      description: 'The run ended (`?wait=true`), finished or failed.', type: 'object', required: ['sessionId', 'invocationId', 'status', 'text'],
      properties: {
        sessionId: { type: 'string' }, invocationId: { type: 'string' },
        status: { type: 'string', description: 'How the run ended: `completed`, an end it reached itself (`limit`, `timeout`, `error`, …), or `failed` when it ended with a terminal error.' },
        text: { type: 'string', description: "The run's last text; empty when it failed." },
        stats: { ...passThroughObject, description: "The run's counters and cost; absent when it failed (the session's `runs` keep them)." },
        error: { type: 'string', description: 'Why the run failed, as the run\'s record in the session says (`runs[].error`); only with `status: "failed"`.' },
      },
    },
    202: {
      description: 'The run was accepted (started, or queued behind the running one), or the services did not answer in time and Restate keeps the prompt (no `invocationId`).',
      type: 'object', required: ['sessionId'],
      properties: {
        sessionId: { type: 'string' }, note: { type: 'string' },
        invocationId: { type: 'string', description: "The run's invocation; absent when the services did not answer in time." },
        queued: { type: 'boolean', description: 'Another run of the session is ahead of this one: it starts when that one ends.' },
      },
    },
    ...errorResponses,
  },
} as const

/** `POST /v1/sessions/:sessionId/prompts`: start (or queue) a run; optionally wait for its result. */
export const sessionPromptRoutes: FastifyPluginAsync<RouteDependencies> = async (app, { ingress, auth, limits, config, admissions }) => {
  const holdMs = Math.min(config.attachTimeoutMs ?? MAX_HOLD_MS, MAX_HOLD_MS)
  app.post<{ Params: SessionParams; Body: SessionRunRequest; Querystring: { wait?: boolean }; Headers: { 'idempotency-key'?: string } }>('/v1/sessions/:sessionId/prompts', { onRequest: auth.requireApiKey, schema }, async (request, reply) => {
    const { sessionId } = request.params
    // Watched from the start: a client that leaves while its run is admitted is not waited for (the run goes on).
    const client = watchClient(reply)
    try {
      const waits = request.query.wait === true
      const wait: AdmissionWait = waits ? { kind: 'held', signal: client.signal, renewMs: holdMs } : { kind: 'bounded', waitMs: config.servicesWaitMs ?? ADMISSION_WAIT_MS }
      checkModel(config.models, request.body.model)
      // The body schema admits exactly the run request's fields.
      const admitted = await admitPrompt(admissions, request.tenant, { sessionKey: sessionKey(request.tenant, sessionId), run: request.body, maxRuns: limits.maxConcurrentRuns, ...idempotencyOf(request.headers['idempotency-key'], request.body) }, wait)
      if (admitted === undefined) return reply.status(202).send({ sessionId, note: PENDING_NOTE })
      const { invocationId, queued } = admitted
      if (!waits) return reply.status(202).send({ sessionId, invocationId, queued, ...(queued ? { note: QUEUED_NOTE } : {}) })
      if (client.signal.aborted) return reply.hijack()
      const result = await attachRun(ingress, invocationId, client.signal, holdMs)
      if ('error' in result) return reply.status(200).send({ sessionId, invocationId, status: 'failed', text: '', error: result.error })
      return reply.status(200).send({ sessionId, invocationId, status: result.status, text: result.text, stats: { ...result.stats, sessionId } })
    } finally {
      client.dispose()
    }
  })
}

/**
 * How long an attach answered 404 is tried again. The admission sent the run before it answered, but the send reaches
 * the session's partition a moment later: on a cluster (seen under load) an attach can get there first.
 */
const UNSEEN_RUN_RETRY_MS = 10_000

/** A run that ended with a terminal error: its message, as the run's record in the session keeps it. */
interface FailedRun { error: string }

/**
 * Waits for the run (`attach`, renewed every `holdMs`); stops waiting (the run goes on) when `abandoned` aborts: the
 * client went away. A terminal failure of the run is its result, not an error of this call.
 */
async function attachRun(ingress: RestateIngress, invocationId: string, abandoned: AbortSignal, holdMs: number): Promise<SessionRunResult | FailedRun> {
  const giveUpAt = performance.now() + UNSEEN_RUN_RETRY_MS
  try {
    for (;;) {
      try {
        return await heldCall(signal => ingress.until(signal).result<SessionRunResult>({ invocationId, status: 'Accepted', attachable: true }), abandoned, holdMs)
      } catch (error) {
        if (!(error instanceof RestateCallError) || error.status !== 404 || performance.now() > giveUpAt || abandoned.aborted) throw error
        await delay(100, undefined, { signal: abandoned }).catch(() => undefined)
      }
    }
  } catch (error) {
    if (!(error instanceof RestateCallError)) throw error
    if (error.status === 409) throw new GatewayError('run_cancelled', `the run was cancelled (${error.message})`)
    if (error.source === 'invocation') return { error: error.message }
    throw error
  }
}

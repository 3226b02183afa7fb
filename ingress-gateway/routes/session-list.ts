import * as clients from '@restatedev/restate-sdk-clients'
import type { FastifyPluginAsync } from 'fastify'
import { sessionIndexInterface, sessionInterface } from '../../contract/interfaces'
import type { SessionIndexEntry } from '../../contract/session-index'
import type { RouteDependencies } from '../app'
import { GatewayError, RestateCallError } from '../errors'
import { answeredWithin, restateCall } from '../restate-ingress'
import { bearerSecurity, errorResponses, querySchema, sessionRouteSchema, type SessionParams } from '../schemas'
import { sessionKey } from '../tenancy'

/** The statuses a session can be listed with (`?status=`): `running` while a run is, else how its last run ended. */
export const LISTED_STATUSES = ['running', 'idle', 'waiting', 'completed', 'aborted', 'cancelled', 'error', 'failed', 'suspended', 'limit', 'timeout'] as const

/** Longest a delete waits for the session's runs ahead of it (a cancelled one stopping, queued prompts) before it answers 202. */
export const DELETE_WAIT_MS = 60_000

const listedSession = {
  type: 'object', required: ['id', 'status', 'lastActivityAt', 'createdAt', 'turns', 'costUsd', 'pending'],
  properties: {
    id: { type: 'string' }, status: { type: 'string', enum: LISTED_STATUSES },
    lastActivityAt: { type: 'number', description: 'When a run of the session last started or ended, or it last asked a question (ms since the epoch).' },
    createdAt: { type: 'number' }, turns: { type: 'integer' }, costUsd: { type: 'number', description: 'Cost of every run, sub-agents included.' },
    pending: { type: 'integer', description: 'Questions and approvals waiting for an answer.' },
  },
} as const

const listSchema = {
  tags: ['sessions'],
  security: bearerSecurity,
  summary: "List the key's sessions, newest activity first",
  description:
    "One page of the API key's sessions, newest activity first; pass `nextCursor` as `cursor` for the next page (null at the end). " +
    'A walk of pages never returns a session twice, and returns every session that existed when it started and had no activity since; ' +
    'a session created or active during the walk moves to the head of the list (the first page of a new walk shows it). ' +
    'Kept by the services as runs start and end, so a run that just started may take a moment to show.',
  querystring: querySchema({
    limit: { type: 'integer', minimum: 1, maximum: 200, default: 50, description: 'Sessions per page.' },
    cursor: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$', description: 'The `nextCursor` of the previous page.' },
    status: { type: 'string', maxLength: 200, pattern: `^(${LISTED_STATUSES.join('|')})(,(${LISTED_STATUSES.join('|')}))*$`, description: 'Only sessions with one of these statuses (comma-separated).' },
  }),
  response: {
    200: {
      type: 'object', required: ['sessions', 'nextCursor'],
      properties: { sessions: { type: 'array', items: listedSession }, nextCursor: { type: ['string', 'null'], description: 'Opaque; null when this is the last page. A page may hold fewer than `limit` sessions and still have a next one.' } },
    },
    ...errorResponses,
  },
} as const

const deleteSchema = {
  summary: 'Delete a session',
  description:
    'Removes the session: its state, event log, questions, steering inbox, list entry and workspace files (its sub-agents\' included). The id can then be used again from scratch. ' +
    'While a run is active it answers 409 `run_active`, unless `cancel=true`: then the run is cancelled and the session deleted once it stopped. ' +
    'Prompts queued behind the run still run first. When that takes longer than 60 s the answer is 202: the deletion happens once they ended.',
  ...sessionRouteSchema,
  querystring: querySchema({ cancel: { type: 'boolean', default: false, description: 'Cancel the active run first instead of answering 409.' } }),
  response: {
    200: { type: 'object', required: ['sessionId', 'deleted'], properties: { sessionId: { type: 'string' }, deleted: { type: 'boolean', const: true } } },
    202: { type: 'object', required: ['sessionId', 'note'], properties: { sessionId: { type: 'string' }, note: { type: 'string' } } },
    ...errorResponses,
  },
} as const

/** The opaque cursor of a position in the index: base64url of `{ v: 1, before }`. */
function encodeCursor(before: number): string {
  return Buffer.from(JSON.stringify({ v: 1, before })).toString('base64url')
}

function decodeCursor(cursor: string): number {
  try {
    const { v, before } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as { v?: unknown; before?: unknown }
    if (v === 1 && typeof before === 'number' && Number.isSafeInteger(before) && before > 0) return before
  } catch {
    // answered below
  }
  throw new GatewayError('invalid_request', 'querystring.cursor is not a cursor this API gave')
}

function listed(entry: SessionIndexEntry) {
  const { id, status, lastActivityAt, createdAt, turns, costUsd, pending } = entry
  return { id, status, lastActivityAt, createdAt, turns, costUsd, pending }
}

/** `GET /v1/sessions` (the key's sessions, from its session index) and `DELETE /v1/sessions/:sessionId`. */
export const sessionListRoutes: FastifyPluginAsync<RouteDependencies> = async (app, { ingress, admin, auth }) => {
  app.get<{ Querystring: { limit: number; cursor?: string; status?: string } }>('/v1/sessions', { onRequest: auth.requireApiKey, schema: listSchema }, async (request) => {
    const { limit, cursor, status } = request.query
    const before = cursor === undefined ? undefined : decodeCursor(cursor)
    const page = await restateCall(() => ingress.client.client(sessionIndexInterface, request.tenant).list({ limit, ...(before === undefined ? {} : { before }), ...(status ? { status: status.split(',') } : {}) }))
    return { sessions: page.entries.map(listed), nextCursor: page.nextBefore === null ? null : encodeCursor(page.nextBefore) }
  })

  app.delete<{ Params: SessionParams; Querystring: { cancel: boolean } }>('/v1/sessions/:sessionId', { onRequest: auth.requireApiKey, schema: deleteSchema }, async (request, reply) => {
    const { sessionId } = request.params
    const key = sessionKey(request.tenant, sessionId)
    const active = await admin.sessionLockHolder(key)
    if (active !== undefined) {
      if (!request.query.cancel) throw new GatewayError('run_active', `session ${sessionId} has a run active (${active}); cancel it first, or delete with cancel=true`)
      await admin.cancel(active).catch((error: unknown) => {
        if (!(error instanceof RestateCallError && (error.status === 404 || error.status === 409))) throw error
      })
    }
    // `erase` is exclusive on the session: it runs once the cancelled run (and any queued before it) ended.
    const erased = await answeredWithin(DELETE_WAIT_MS, options => ingress.client.client(sessionInterface, key).erase({}, clients.rpc.opts(options)))
    if (erased === undefined) return reply.status(202).send({ sessionId, note: 'The session has runs ahead of the deletion; it is deleted once they ended.' })
    if (!erased.existed) throw new GatewayError('session_not_found', `session ${sessionId} not found`)
    return { sessionId, deleted: true }
  })
}

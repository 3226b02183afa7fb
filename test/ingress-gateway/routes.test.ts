import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { SessionRunResult, SessionView } from '../../contract/session'
import { signAnswerToken } from '../../ingress-gateway/answer-token'
import { bodyFingerprint } from '../../ingress-gateway/idempotency'
import { sessionKey, tenantOf } from '../../ingress-gateway/tenancy'
import { startFakeRestate, type FakeResponse, type FakeRestate, type RecordedRequest } from './helpers/fake-restate'
import { bearer, KEY_A, KEY_B, testConfig, testGateway } from './helpers/gateway'

const KEY_OF_A = sessionKey(tenantOf(KEY_A), 's1')
const SESSION_PATH = `/session/${encodeURIComponent(KEY_OF_A)}`
const ADMISSION_PATH = `/admission/${tenantOf(KEY_A)}`

function view(overrides: Partial<SessionView> = {}): SessionView {
  return {
    exists: true,
    id: KEY_OF_A,
    status: 'waiting',
    turns: [{ id: 't1', runId: 'r1', role: 'user', content: [{ type: 'text', text: 'hi' }], createdAt: 1 }],
    runs: [{ id: 'r1', status: 'running', prompt: 'hi', startedAt: 1, depth: 0 }],
    usage: { usage: { inputTokens: 3, outputTokens: 4, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0.5, modelRequests: 1, toolCalls: 0, turns: 1 },
    counts: { turns: 1, runs: 1 },
    page: { from: 0, to: 1, total: 1, limit: 50, nextTurnsAfter: null, previousTurnsAfter: null },
    createdAt: 1,
    updatedAt: 2,
    pending: [{ id: 'sign_1q/x', kind: 'ask_user', question: 'Which one?', options: ['a', 'b'], createdAt: 5 }],
    invocation: { invocationId: 'inv_1', status: 'running', startedAt: 1 },
    ...overrides,
  }
}

/** Answers the admin API's SQL queries (`POST /admin/query`) with the rows given for the table each one reads. */
function sqlTables(tables: Record<string, unknown[]>): (request: RecordedRequest) => FakeResponse {
  return (request) => {
    const { query } = request.body as { query: string }
    const table = Object.keys(tables).find((name) => query.includes(`FROM ${name} `))
    return { status: 200, body: { rows: table === undefined ? [] : tables[table] } }
  }
}

/** The SQL texts the gateway sent to the admin API since the last reset. */
function sqlQueries(restate: FakeRestate): string[] {
  return restate.requests.filter((request) => request.path === '/admin/query').map((request) => (request.body as { query: string }).query)
}

const MISSING: SessionView = { exists: false, id: '', status: 'idle', turns: [], runs: [], usage: view().usage, pending: [], counts: { turns: 0, runs: 0 }, page: { from: 0, to: 0, total: 0, limit: 50, nextTurnsAfter: null, previousTurnsAfter: null } }

describe('routes against a stand-in Restate', () => {
  let restate: FakeRestate
  let app: FastifyInstance
  beforeAll(async () => {
    restate = await startFakeRestate()
    app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: `${restate.url}/admin`, servicesWaitMs: 300 })
  })
  afterAll(async () => {
    await app.close()
    await restate.close()
  })
  beforeEach(() => {
    restate.requests.length = 0
  })

  describe('POST /v1/sessions/:sessionId/prompts', () => {
    it("asks the tenant's admission in one call, with only content-type and idempotency-key reaching Restate", async () => {
      restate.on(`POST ${ADMISSION_PATH}/admit`, { status: 200, body: { outcome: 'admitted', invocationId: 'inv_2', queued: false } })
      const response = await app.inject({
        method: 'POST',
        url: '/v1/sessions/s1/prompts',
        payload: { prompt: 'hello', maxTurns: 3 },
        headers: { ...bearer(KEY_A), 'idempotency-key': 'idem-1', cookie: 'c=1', 'x-forwarded-for': '1.2.3.4' },
      })
      expect(response.statusCode).toBe(202)
      expect(response.json()).toEqual({ sessionId: 's1', invocationId: 'inv_2', queued: false })
      expect(restate.requests.map((request) => `${request.method} ${request.path}`)).toEqual([`POST ${ADMISSION_PATH}/admit`])
      // The body's fingerprint goes with the key: the admission tells the same key with another body apart (422).
      expect(restate.requests[0]?.body).toEqual({ sessionKey: KEY_OF_A, run: { prompt: 'hello', maxTurns: 3 }, maxRuns: 20, idempotency: { key: 'idem-1', fingerprint: bodyFingerprint({ prompt: 'hello', maxTurns: 3 }) } })
      for (const request of restate.requests) {
        expect(request.headers.authorization).toBeUndefined()
        expect(request.headers.cookie).toBeUndefined()
        expect(request.headers['x-forwarded-for']).toBeUndefined()
        expect(request.headers['idempotency-key']).toBeUndefined()
      }
    })

    it('reports queued, with a note, when the admission has another run of the session ahead of it', async () => {
      restate.on(`POST ${ADMISSION_PATH}/admit`, { status: 200, body: { outcome: 'admitted', invocationId: 'inv_2', queued: true } })
      const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'next' }, headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(202)
      expect(response.json()).toMatchObject({ invocationId: 'inv_2', queued: true, note: expect.stringContaining('queued') })
      expect(restate.requests[0]?.body).not.toHaveProperty('idempotency')
    })

    it('answers 202 without an invocation id when the admission does not answer in time (no services process up)', async () => {
      restate.on(`POST ${ADMISSION_PATH}/admit`, async () => new Promise(() => undefined))
      const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'while down' }, headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(202)
      expect(response.json()).toEqual({ sessionId: 's1', note: expect.stringContaining('Restate keeps the prompt') })
    })

    it('?wait=true admits with an idempotency key of its own, attaches and returns the result', async () => {
      const result: SessionRunResult = { sessionId: KEY_OF_A, status: 'completed', text: 'done', stats: { runId: 'r2', turns: 1, costUsd: 0.1 } as SessionRunResult['stats'] }
      restate.on(`POST ${ADMISSION_PATH}/admit`, { status: 200, body: { outcome: 'admitted', invocationId: 'inv_3', queued: false } })
      restate.on('GET /restate/invocation/inv_3/attach', { status: 200, body: result })
      const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts?wait=true', payload: { prompt: 'p' }, headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ sessionId: 's1', invocationId: 'inv_3', status: 'completed', text: 'done', stats: { runId: 'r2', sessionId: 's1', turns: 1, costUsd: 0.1 } })
      expect(restate.requests[0]?.headers['idempotency-key']).toMatch(/^admission-/)
    })

    it('?wait=true maps a cancelled run to 409 run_cancelled and answers a terminal failure 200 with status failed', async () => {
      restate.on(`POST ${ADMISSION_PATH}/admit`, { status: 200, body: { outcome: 'admitted', invocationId: 'inv_4', queued: false } })
      restate.on('GET /restate/invocation/inv_4/attach', { status: 409, body: { code: 409, message: 'Cancelled', source: 'invocation' } })
      const cancelled = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts?wait=true', payload: { prompt: 'p' }, headers: bearer(KEY_A) })
      expect(cancelled.statusCode).toBe(409)
      expect(cancelled.json().error.code).toBe('run_cancelled')
      restate.on('GET /restate/invocation/inv_4/attach', { status: 422, body: { code: 422, message: 'depth refused', source: 'invocation' } })
      const failed = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts?wait=true', payload: { prompt: 'p' }, headers: bearer(KEY_A) })
      expect(failed.statusCode).toBe(200)
      expect(failed.json()).toEqual({ sessionId: 's1', invocationId: 'inv_4', status: 'failed', text: '', error: 'depth refused' })
    })

    it('maps an unexpected Restate error (service not registered) to 502 restate_error', async () => {
      restate.on(`POST ${ADMISSION_PATH}/admit`, { status: 404, body: { message: 'service admission not found' } })
      const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'p' }, headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(502)
      expect(response.json().error).toEqual({ code: 'restate_error', message: 'Restate answered 404: service admission not found' })
    })
  })

  describe('GET /v1/sessions/:sessionId', () => {
    const ended = view({ status: 'completed', invocation: { invocationId: 'inv_1', status: 'completed', startedAt: 1, endedAt: 2 } })

    it("returns the session under the user's id with signed answer links, from the session's own handlers only", async () => {
      restate.on(`POST ${SESSION_PATH}/get`, { status: 200, body: view() })
      restate.on(`POST ${ADMISSION_PATH}/failedRun`, { status: 200, body: null })
      const response = await app.inject({ method: 'GET', url: '/v1/sessions/s1', headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(200)
      const body = response.json()
      const expected = view()
      expect(body).toEqual({
        id: 's1',
        status: 'waiting',
        createdAt: 1,
        updatedAt: 2,
        counts: expected.counts,
        turns: expected.turns,
        page: expected.page,
        runs: expected.runs,
        usage: expected.usage,
        invocation: expected.invocation,
        pending: [{ ...expected.pending[0], answerUrl: `http://gateway.test/v1/awakeables/sign_1q%2Fx/resolve?token=${signAnswerToken(testConfig().answerSecret, 'sign_1q/x')}` }],
      })
      expect(restate.requests.map((request) => [request.path, request.body])).toEqual([[`${SESSION_PATH}/get`, { limit: 50 }], [`${ADMISSION_PATH}/failedRun`, KEY_OF_A]])
    })

    it('passes the page asked for, validated', async () => {
      restate.on(`POST ${SESSION_PATH}/get`, { status: 200, body: ended })
      const response = await app.inject({ method: 'GET', url: '/v1/sessions/s1?turnsAfter=40&limit=20', headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(200)
      expect(restate.requests.map((request) => request.body)).toEqual([{ turnsAfter: 40, limit: 20 }])
      for (const query of ['limit=0', 'limit=201', 'turnsAfter=-1', 'turnsAfter=x', 'page=2']) {
        const bad = await app.inject({ method: 'GET', url: `/v1/sessions/s1?${query}`, headers: bearer(KEY_A) })
        expect(bad.statusCode, query).toBe(400)
        expect(bad.json().error.code, query).toBe('invalid_request')
      }
    })

    it('reads a session whose run ended with one call, and never asks the admin API', async () => {
      restate.on(`POST ${SESSION_PATH}/get`, { status: 200, body: ended })
      const response = await app.inject({ method: 'GET', url: '/v1/sessions/s1', headers: bearer(KEY_A) })
      expect(response.json()).toMatchObject({ status: 'completed', invocation: { status: 'completed' } })
      expect(restate.requests.map((request) => request.path)).toEqual([`${SESSION_PATH}/get`])
    })

    it('a read racing the end of a run that completed reports it running or completed, never killed', async () => {
      // The first read saw the record while the run was finishing; the run has completed since (no failure recorded).
      restate.on(`POST ${SESSION_PATH}/get`, { status: 200, body: view() })
      restate.on(`POST ${ADMISSION_PATH}/failedRun`, { status: 200, body: null })
      const response = await app.inject({ method: 'GET', url: '/v1/sessions/s1', headers: bearer(KEY_A) })
      expect(response.json()).toMatchObject({ status: 'waiting', invocation: { invocationId: 'inv_1', status: 'running' } })
      expect(restate.requests.some((request) => request.path.startsWith('/admin'))).toBe(false)
    })

    it('reports interrupted and killed for a run that ended with an error without recording it, after reading the session again', async () => {
      let reads = 0
      restate.on(`POST ${SESSION_PATH}/get`, () => ({ status: 200, body: ++reads === 1 ? view() : view({ status: 'running' }) }))
      restate.on(`POST ${ADMISSION_PATH}/failedRun`, { status: 200, body: 'inv_1' })
      const response = await app.inject({ method: 'GET', url: '/v1/sessions/s1', headers: bearer(KEY_A) })
      expect(response.json()).toMatchObject({ status: 'interrupted', invocation: { invocationId: 'inv_1', status: 'killed' } })
      expect(restate.requests.map((request) => request.path)).toEqual([`${SESSION_PATH}/get`, `${ADMISSION_PATH}/failedRun`, `${SESSION_PATH}/get`])
    })

    it('a run that recorded its failure while the read went on reads as it recorded it', async () => {
      let reads = 0
      const failed = view({ status: 'failed', invocation: { invocationId: 'inv_1', status: 'failed', startedAt: 1, endedAt: 3, error: 'tool_failed: x' } })
      restate.on(`POST ${SESSION_PATH}/get`, () => ({ status: 200, body: ++reads === 1 ? view() : failed }))
      restate.on(`POST ${ADMISSION_PATH}/failedRun`, { status: 200, body: 'inv_1' })
      const response = await app.inject({ method: 'GET', url: '/v1/sessions/s1', headers: bearer(KEY_A) })
      expect(response.json()).toMatchObject({ status: 'failed', invocation: { invocationId: 'inv_1', status: 'failed' } })
    })

    it('404 session_not_found when the key never ran; another key sees another object', async () => {
      restate.on(`POST /session/${encodeURIComponent(sessionKey(tenantOf(KEY_B), 's1'))}/get`, { status: 200, body: MISSING })
      const response = await app.inject({ method: 'GET', url: '/v1/sessions/s1', headers: bearer(KEY_B) })
      expect(response.statusCode).toBe(404)
      expect(response.json()).toEqual({ error: { code: 'session_not_found', message: 'session s1 not found' } })
    })
  })

  describe('POST /v1/sessions/:sessionId/cancel', () => {
    it('cancels the invocation that holds the session through the admin API, running no handler', async () => {
      restate.on('POST /admin/query', sqlTables({ sys_keyed_service_status: [{ invocation_id: 'inv_1' }] }))
      restate.on('PATCH /admin/invocations/inv_1/cancel', { status: 202 })
      const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/cancel', headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(202)
      expect(response.json()).toEqual({ invocationId: 'inv_1' })
      expect(restate.requests.map((request) => `${request.method} ${request.path}`)).toEqual(['POST /admin/query', 'PATCH /admin/invocations/inv_1/cancel'])
    })

    it('409 nothing_running when no invocation runs, or it ended meanwhile', async () => {
      const ended = { invocationId: 'inv_1', status: 'completed', startedAt: 1, endedAt: 2 }
      restate.on('POST /admin/query', sqlTables({ sys_keyed_service_status: [], state: [{ value_utf8: JSON.stringify(ended) }] }))
      const idle = await app.inject({ method: 'POST', url: '/v1/sessions/s1/cancel', headers: bearer(KEY_A) })
      expect(idle.statusCode).toBe(409)
      expect(idle.json().error.code).toBe('nothing_running')
      expect(sqlQueries(restate)[1]).toBe(`SELECT value_utf8 FROM state WHERE service_name = 'session' AND service_key = '${KEY_OF_A}' AND key = 'current_invocation'`)
      restate.on('POST /admin/query', sqlTables({ sys_keyed_service_status: [{ invocation_id: 'inv_1' }] }))
      restate.on('PATCH /admin/invocations/inv_1/cancel', { status: 409, body: { message: 'already completed' } })
      const raced = await app.inject({ method: 'POST', url: '/v1/sessions/s1/cancel', headers: bearer(KEY_A) })
      expect(raced.statusCode).toBe(409)
      expect(raced.json().error.code).toBe('nothing_running')
    })

    it('404 when the session does not exist', async () => {
      restate.on('POST /admin/query', sqlTables({ sys_keyed_service_status: [], state: [] }))
      const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/cancel', headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(404)
    })
  })

  describe('POST /v1/awakeables/:id/resolve', () => {
    const id = 'sign_1q/x'
    const url = `/v1/awakeables/${encodeURIComponent(id)}/resolve`
    const resumer = `/resumer/${encodeURIComponent(id)}`

    it("answers with the API key in one call to the resumer, which checks the owner is the key's tenant", async () => {
      restate.on(`POST ${resumer}/answer`, { status: 200, body: { outcome: 'answered', sessionKey: KEY_OF_A } })
      const response = await app.inject({ method: 'POST', url, payload: { answer: { choice: 'a' } }, headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ id, status: 'answered' })
      expect(restate.requests.map((request) => [request.path, request.body])).toEqual([[`${resumer}/answer`, { answer: { choice: 'a' }, owner: `${tenantOf(KEY_A)}~` }]])
    })

    it("404 for another tenant's question (the resumer answers unknown to that owner)", async () => {
      restate.on(`POST ${resumer}/answer`, (request) => ({ status: 200, body: (request.body as { owner?: string }).owner === `${tenantOf(KEY_A)}~` ? { outcome: 'answered' } : { outcome: 'unknown' } }))
      const response = await app.inject({ method: 'POST', url, payload: { answer: 'a' }, headers: bearer(KEY_B) })
      expect(response.statusCode).toBe(404)
      expect(response.json().error.code).toBe('question_not_found')
    })

    it('answers 202 accepted when the resumer does not answer in time (no services process up)', async () => {
      restate.on(`POST ${resumer}/answer`, async () => new Promise(() => undefined))
      const response = await app.inject({ method: 'POST', url, payload: { answer: 'a' }, headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(202)
      expect(response.json()).toEqual({ id, status: 'accepted' })
    })

    it('answers with a token alone (no owner checked) and maps the outcomes', async () => {
      const token = signAnswerToken(testConfig().answerSecret, id)
      const cases = [
        ['unknown', 404, 'question_not_found'],
        ['already_answered', 409, 'already_answered'],
        ['expired', 410, 'question_expired'],
        ['closed', 409, 'question_closed'],
      ] as const
      for (const [outcome, status, code] of cases) {
        restate.on(`POST ${resumer}/answer`, { status: 200, body: { outcome } })
        const response = await app.inject({ method: 'POST', url: `${url}?token=${token}`, payload: { answer: 'a' } })
        expect(response.statusCode, outcome).toBe(status)
        expect(response.json().error.code).toBe(code)
      }
      expect(restate.requests.map((request) => request.body)).toEqual(cases.map(() => ({ answer: 'a' })))
    })

    it('409 question_closed, naming the reason, for a question whose run ended', async () => {
      restate.on(`POST ${resumer}/answer`, { status: 200, body: { outcome: 'closed', reason: 'cancelled', sessionKey: KEY_OF_A } })
      const response = await app.inject({ method: 'POST', url, payload: { answer: 'late' }, headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(409)
      expect(response.json().error).toEqual({ code: 'question_closed', message: `question ${id} is closed: its run was cancelled` })
    })
  })

  describe('GET /readyz', () => {
    it('200 when the admin API and the ingress answer', async () => {
      restate.on('GET /admin/health', { status: 200 })
      restate.on('GET /restate/health', { status: 200 })
      const response = await app.inject({ method: 'GET', url: '/readyz' })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ status: 'ready' })
    })

    it('503 naming the part that does not answer', async () => {
      restate.on('GET /admin/health', { status: 200 })
      restate.on('GET /restate/health', { status: 500 })
      const response = await app.inject({ method: 'GET', url: '/readyz' })
      expect(response.statusCode).toBe(503)
      expect(response.json().error.message).toBe('Restate ingress not responding')
    })
  })
})

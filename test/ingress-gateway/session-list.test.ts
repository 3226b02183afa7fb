import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { tenantOf } from '../../ingress-gateway/tenancy'
import { startFakeRestate, type FakeRestate, type RecordedRequest } from './helpers/fake-restate'
import { bearer, KEY_A, KEY_B, testGateway } from './helpers/gateway'

const entry = (id: string, seq: number) => ({ id, seq, status: 'completed', lastActivityAt: seq * 10, createdAt: 1, turns: 2, costUsd: 0.5, pending: 0 })
const lockQuery = (request: RecordedRequest): boolean => request.path === '/admin/query' && (request.body as { query: string }).query.includes('sys_keyed_service_status')

describe('GET /v1/sessions and DELETE /v1/sessions/:sessionId against a stand-in Restate', () => {
  let restate: FakeRestate
  let app: FastifyInstance
  let lockHolder: string | undefined
  beforeAll(async () => {
    restate = await startFakeRestate()
    app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: `${restate.url}/admin` })
    restate.on('POST /admin/query', request => ({ status: 200, body: { rows: lockQuery(request) && lockHolder ? [{ invocation_id: lockHolder }] : [] } }))
  })
  afterAll(async () => {
    await app.close()
    await restate.close()
  })
  beforeEach(() => {
    restate.requests.length = 0
    lockHolder = undefined
  })

  it("lists the key's own index, and hands its position back as an opaque cursor", async () => {
    restate.on(`POST /session_index/${tenantOf(KEY_A)}/list`, request => {
      const { before } = request.body as { before?: number }
      return { status: 200, body: before === undefined ? { entries: [entry('b', 9), entry('a', 4)], nextBefore: 4 } : { entries: [entry('z', 3)], nextBefore: null } }
    })
    const first = await app.inject({ url: '/v1/sessions?limit=2&status=completed,failed', headers: bearer(KEY_A) })
    expect(first.statusCode).toBe(200)
    const body = first.json<{ sessions: { id: string }[]; nextCursor: string }>()
    expect(body.sessions).toEqual([
      { id: 'b', status: 'completed', lastActivityAt: 90, createdAt: 1, turns: 2, costUsd: 0.5, pending: 0 },
      { id: 'a', status: 'completed', lastActivityAt: 40, createdAt: 1, turns: 2, costUsd: 0.5, pending: 0 },
    ])
    expect(restate.requests[0]?.body).toEqual({ limit: 2, status: ['completed', 'failed'] })
    const second = await app.inject({ url: `/v1/sessions?cursor=${body.nextCursor}`, headers: bearer(KEY_A) })
    expect(second.json()).toEqual({ sessions: [expect.objectContaining({ id: 'z' })], nextCursor: null })
    expect(restate.requests[1]?.body).toEqual({ limit: 50, before: 4 })
  })

  it('refuses a cursor it did not give, and an unknown status', async () => {
    for (const query of ['cursor=abc', `cursor=${Buffer.from('{"v":1,"before":-1}').toString('base64url')}`, 'status=sleeping', 'limit=0', 'limit=201']) {
      const response = await app.inject({ url: `/v1/sessions?${query}`, headers: bearer(KEY_A) })
      expect(response.statusCode, query).toBe(400)
      expect(response.json<{ error: { code: string } }>().error.code).toBe('invalid_request')
    }
    expect(restate.requests).toEqual([])
  })

  it('deletes an idle session through its erase, and answers 404 for one that never ran', async () => {
    let existed = true
    restate.on(`POST /session/${tenantOf(KEY_B)}~s1/erase`, () => ({ status: 200, body: { existed, erased: true } }))
    const deleted = await app.inject({ method: 'DELETE', url: '/v1/sessions/s1', headers: bearer(KEY_B) })
    expect(deleted.statusCode).toBe(200)
    expect(deleted.json()).toEqual({ sessionId: 's1', deleted: true })
    existed = false
    const missing = await app.inject({ method: 'DELETE', url: '/v1/sessions/s1', headers: bearer(KEY_B) })
    expect(missing.statusCode).toBe(404)
    expect(missing.json<{ error: { code: string } }>().error.code).toBe('session_not_found')
  })

  it('answers 409 run_active while a run holds the session, and cancels it first with cancel=true', async () => {
    lockHolder = 'inv_1'
    restate.on(`POST /session/${tenantOf(KEY_A)}~busy/erase`, { status: 200, body: { existed: true, erased: true } })
    restate.on('PATCH /admin/invocations/inv_1/cancel', { status: 202 })
    const refused = await app.inject({ method: 'DELETE', url: '/v1/sessions/busy', headers: bearer(KEY_A) })
    expect(refused.statusCode).toBe(409)
    expect(refused.json<{ error: { code: string } }>().error.code).toBe('run_active')
    expect(restate.requests.some(request => request.path.endsWith('/erase'))).toBe(false)
    const cancelled = await app.inject({ method: 'DELETE', url: '/v1/sessions/busy?cancel=true', headers: bearer(KEY_A) })
    expect(cancelled.statusCode).toBe(200)
    expect(restate.requests.map(request => `${request.method} ${request.path}`).slice(-2)).toEqual(['PATCH /admin/invocations/inv_1/cancel', `POST /session/${tenantOf(KEY_A)}~busy/erase`])
  })
})

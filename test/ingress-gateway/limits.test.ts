import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { sessionKey, tenantOf } from '../../ingress-gateway/tenancy'
import { createRateLimiter } from '../../ingress-gateway/tenant-limits'
import { startFakeRestate, type FakeRestate, type RecordedRequest } from './helpers/fake-restate'
import { bearer, KEY_A, KEY_B, testGateway } from './helpers/gateway'

const TENANT_A = tenantOf(KEY_A)
const SESSION_A = `/session/${encodeURIComponent(sessionKey(TENANT_A, 's1'))}`

/** One unfinished invocation of the tenant's sessions in the fake `sys_invocation` table. */
type UnfinishedInvocation = { handler: string }

/**
 * Answers the admin API's count of unfinished invocations over `invocations`, honouring the query's
 * `target_handler_name IN (…)` filter (without one every invocation counts); other SQL gets no rows.
 */
function unfinishedOf(invocations: UnfinishedInvocation[]) {
  return (request: RecordedRequest) => {
    const { query } = request.body as { query: string }
    if (!query.includes('FROM sys_invocation ')) return { status: 200, body: { rows: [] } }
    const listed = /target_handler_name IN \(([^)]*)\)/.exec(query)?.[1]?.split(',').map((name) => name.trim().replace(/^'|'$/g, ''))
    const unfinished = invocations.filter((invocation) => listed === undefined || listed.includes(invocation.handler)).length
    return { status: 200, body: { rows: [{ unfinished }] } }
  }
}

/** `unfinished` runs in flight (`session/<key>/run`). */
function unfinishedRuns(unfinished: number) {
  return unfinishedOf(Array.from({ length: unfinished }, () => ({ handler: 'run' })))
}

describe('rate limit per API key (token bucket)', () => {
  it('answers 429 rate_limited with Retry-After once the burst is spent, for that key only', async () => {
    const app = await testGateway({ limits: { requestsPerSecond: 1, requestBurst: 3 } })
    const statuses: number[] = []
    for (let attempt = 0; attempt < 4; attempt++) statuses.push((await app.inject({ method: 'GET', url: '/v1/sessions/s1', headers: bearer(KEY_A) })).statusCode)
    expect(statuses).toEqual([503, 503, 503, 429])
    const limited = await app.inject({ method: 'GET', url: '/v1/sessions/s1', headers: bearer(KEY_A) })
    expect(limited.headers['retry-after']).toBe('1')
    expect(limited.json()).toEqual({ error: { code: 'rate_limited', message: expect.stringContaining('too many requests') } })
    expect((await app.inject({ method: 'GET', url: '/v1/sessions/s1', headers: bearer(KEY_B) })).statusCode).toBe(503)
    await app.close()
  })

  it('refills at the configured rate', () => {
    let nowMs = 0
    const limiter = createRateLimiter({ requestsPerSecond: 2, requestBurst: 2 }, () => nowMs)
    limiter.take('t')
    limiter.take('t')
    expect(() => limiter.take('t')).toThrow(expect.objectContaining({ code: 'rate_limited', retryAfterSeconds: 1 }))
    nowMs = 500
    expect(() => limiter.take('t')).not.toThrow()
    expect(() => limiter.take('t')).toThrow(expect.objectContaining({ code: 'rate_limited' }))
  })
})

describe('concurrent runs per API key', () => {
  let restate: FakeRestate
  let app: FastifyInstance
  beforeAll(async () => {
    restate = await startFakeRestate()
    app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: `${restate.url}/admin`, limits: { maxConcurrentRuns: 2 } })
  })
  afterAll(async () => {
    await app.close()
    await restate.close()
  })

  it("counts the key's unfinished runs in Restate and answers 429 too_many_runs at the limit", async () => {
    restate.on(`POST ${SESSION_A}/run/send`, { status: 202, body: { invocationId: 'inv_1', status: 'Accepted' } })
    restate.on('POST /admin/query', unfinishedRuns(1))
    restate.requests.length = 0
    expect((await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'hi' }, headers: bearer(KEY_A) })).statusCode).toBe(202)
    const count = restate.requests.map((request) => (request.body as { query?: string } | undefined)?.query ?? '').find((query) => query.includes('sys_invocation'))
    expect(count).toContain(`target_service_key LIKE '${TENANT_A}~%'`)
    restate.on('POST /admin/query', unfinishedRuns(2))
    restate.requests.length = 0
    const refused = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts?wait=true', payload: { prompt: 'hi' }, headers: bearer(KEY_A) })
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe('5')
    expect(refused.json()).toMatchObject({ error: { code: 'too_many_runs' } })
    expect(restate.requests.filter((request) => request.path.endsWith('/run/send'))).toEqual([])
  })

  it('counts the run handlers only: reads left unfinished (get, invocation, pending) are no runs, deliveries are', async () => {
    restate.on(`POST ${SESSION_A}/run/send`, { status: 202, body: { invocationId: 'inv_1', status: 'Accepted' } })
    restate.on('POST /admin/query', unfinishedOf([{ handler: 'run' }, { handler: 'get' }, { handler: 'invocation' }, { handler: 'pending' }, { handler: 'get' }]))
    expect((await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'hi' }, headers: bearer(KEY_A) })).statusCode).toBe(202)
    restate.on('POST /admin/query', unfinishedOf([{ handler: 'run' }, { handler: 'deliver' }, { handler: 'get' }]))
    const refused = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'hi' }, headers: bearer(KEY_A) })
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toMatchObject({ error: { code: 'too_many_runs' } })
  })

  it('counts the sends in flight too, so a burst cannot overshoot', async () => {
    restate.on('POST /admin/query', unfinishedRuns(0))
    let arrived!: () => void
    const firstArrived = new Promise<void>((resolve) => { arrived = resolve })
    let release!: () => void
    const held = new Promise<void>((resolve) => { release = resolve })
    restate.on(`POST ${SESSION_A}/run/send`, async () => {
      arrived()
      await held
      return { status: 202, body: { invocationId: 'inv_1', status: 'Accepted' } }
    })
    const sends = [0, 1].map(async () => app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'hi' }, headers: bearer(KEY_A) }))
    await firstArrived
    const third = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'hi' }, headers: bearer(KEY_A) })
    release()
    const statuses = [(await sends[0])?.statusCode, (await sends[1])?.statusCode, third.statusCode].sort()
    expect(statuses).toEqual([202, 202, 429])
  })

  it('does not refuse a prompt when the admin API does not answer', async () => {
    restate.on('POST /admin/query', { status: 500, body: { message: 'down' } })
    restate.on(`POST ${SESSION_A}/run/send`, { status: 202, body: { invocationId: 'inv_1', status: 'Accepted' } })
    expect((await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'hi' }, headers: bearer(KEY_A) })).statusCode).toBe(202)
  })
})

describe('concurrent event streams per API key', () => {
  let restate: FakeRestate
  let app: FastifyInstance
  let base: string
  beforeAll(async () => {
    restate = await startFakeRestate()
    for (const key of [KEY_A, KEY_B]) {
      const path = `/session/${encodeURIComponent(sessionKey(tenantOf(key), 's1'))}`
      restate.on(`POST ${path}/invocation`, { status: 200, body: { invocationId: 'inv_1', status: 'running', startedAt: 1 } })
      restate.on(`POST ${path}/events`, { status: 200, body: [] })
    }
    app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: restate.url, limits: { maxEventStreams: 1 } })
    base = await app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    await app.close()
    await restate.close()
  })

  it('answers 429 too_many_streams past the limit, for that key only, and frees the slot when a stream closes', async () => {
    const first = new AbortController()
    const open = await fetch(`${base}/v1/sessions/s1/events`, { headers: bearer(KEY_A), signal: first.signal })
    expect(open.status).toBe(200)
    const refused = await fetch(`${base}/v1/sessions/s1/events`, { headers: bearer(KEY_A) })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('5')
    expect(await refused.json()).toMatchObject({ error: { code: 'too_many_streams' } })
    const other = new AbortController()
    expect((await fetch(`${base}/v1/sessions/s1/events`, { headers: bearer(KEY_B), signal: other.signal })).status).toBe(200)
    other.abort()
    first.abort()
    await vi.waitFor(async () => {
      const again = new AbortController()
      const response = await fetch(`${base}/v1/sessions/s1/events`, { headers: bearer(KEY_A), signal: again.signal })
      again.abort()
      expect(response.status).toBe(200)
    }, { timeout: 10_000 })
  })
})

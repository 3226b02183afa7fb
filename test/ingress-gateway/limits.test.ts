import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { sessionKey, tenantOf } from '../../ingress-gateway/tenancy'
import { createRateLimiter } from '../../ingress-gateway/tenant-limits'
import { startFakeRestate, type FakeRestate } from './helpers/fake-restate'
import { bearer, KEY_A, KEY_B, testGateway } from './helpers/gateway'

const TENANT_A = tenantOf(KEY_A)

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

  it("hands the key's cap to its admission and answers its refusal 429 too_many_runs with Retry-After, for prompts and steering", async () => {
    const admission = `/admission/${TENANT_A}`
    restate.on(`POST ${admission}/admit`, { status: 200, body: { outcome: 'too_many_runs', maxRuns: 2 } })
    restate.on(`POST ${admission}/steer`, { status: 200, body: { outcome: 'too_many_runs', maxRuns: 2 } })
    for (const [route, payload] of [['prompts?wait=true', { prompt: 'hi' }], ['messages', { text: 'and also' }]] as const) {
      const refused = await app.inject({ method: 'POST', url: `/v1/sessions/s3/${route}`, payload, headers: bearer(KEY_A) })
      expect(refused.statusCode, route).toBe(429)
      expect(refused.headers['retry-after']).toBe('5')
      expect(refused.json()).toEqual({ error: { code: 'too_many_runs', message: expect.stringContaining('already has 2 runs') } })
    }
    expect(restate.requests.map(request => [request.path, (request.body as { maxRuns: number }).maxRuns])).toEqual([[`${admission}/admit`, 2], [`${admission}/steer`, 2]])
  })

  it("asks each key's own admission object", async () => {
    restate.on(`POST /admission/${tenantOf(KEY_B)}/admit`, { status: 200, body: { outcome: 'admitted', invocationId: 'inv_b', queued: false } })
    expect((await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'hi' }, headers: bearer(KEY_B) })).statusCode).toBe(202)
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
      restate.on(`POST /events/${encodeURIComponent(sessionKey(tenantOf(key), 's1'))}/read`, { status: 200, body: { events: [], count: 0 } })
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

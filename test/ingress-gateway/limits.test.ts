import type { FastifyInstance } from 'fastify'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import { sessionKey, tenantOf } from '../../ingress-gateway/tenancy'
import { createRateLimiter } from '../../ingress-gateway/tenant-limits'
import { fakeInvocations, type FakeInvocation, type FakeInvocations } from './helpers/fake-invocations'
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
  let table: FakeInvocations
  let app: FastifyInstance
  beforeEach(async () => {
    restate = await startFakeRestate()
    table = fakeInvocations(restate)
    app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: `${restate.url}/admin`, limits: { maxConcurrentRuns: 2 } })
  })
  afterEach(async () => {
    await app.close()
    await restate.close()
  })
  const prompt = (sessionId: string, key = KEY_A) => app.inject({ method: 'POST', url: `/v1/sessions/${sessionId}/prompts`, payload: { prompt: 'hi' }, headers: bearer(key) })
  const steer = (sessionId: string) => app.inject({ method: 'POST', url: `/v1/sessions/${sessionId}/messages`, payload: { text: 'and also' }, headers: bearer(KEY_A) })
  const run = (sessionId: string, status = 'suspended', handler = 'run'): FakeInvocation => ({ id: `inv_${sessionId}_${handler}`, service: 'session', handler, sessionKey: sessionKey(TENANT_A, sessionId), status })
  const sends = () => restate.requests.filter((request) => request.path.endsWith('/send'))

  it("counts the key's unfinished runs in Restate and answers 429 too_many_runs with Retry-After at the limit, for that key only", async () => {
    table.rows.push(run('s1'), run('s2', 'completed'))
    expect((await prompt('s2')).statusCode).toBe(202)
    const query = restate.requests.map((request) => (request.body as { query?: string } | undefined)?.query ?? '').find((sql) => sql.includes('sys_invocation'))
    expect(query).toContain(`target_service_key LIKE '${TENANT_A}~%'`)
    const refused = await app.inject({ method: 'POST', url: '/v1/sessions/s3/prompts?wait=true', payload: { prompt: 'hi' }, headers: bearer(KEY_A) })
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe('5')
    expect(refused.json()).toEqual({ error: { code: 'too_many_runs', message: expect.stringContaining('already has 2 runs') } })
    expect(sends()).toHaveLength(1)
    expect((await prompt('s1', KEY_B)).statusCode).toBe(202)
  })

  it('counts a run once while its send is in flight and Restate already shows it: two waves of a burst of exactly the cap are all taken', async () => {
    await app.close()
    app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: `${restate.url}/admin`, limits: { maxConcurrentRuns: 20 } })
    let release!: () => void
    table.behaviour.hold = new Promise<void>((resolve) => { release = resolve })
    const first = Array.from({ length: 10 }, (_, index) => prompt(`a${index}`))
    await vi.waitFor(() => expect(table.sentKeys).toHaveLength(10))
    // Restate shows the first ten while their sends have not answered yet: each must count once.
    const second = Array.from({ length: 10 }, (_, index) => prompt(`b${index}`))
    const secondDone = Promise.all(second)
    await Promise.race([secondDone, vi.waitFor(() => expect(table.sentKeys).toHaveLength(20))])
    release()
    const statuses = (await Promise.all([...first, ...second])).map((response) => response.statusCode)
    expect(statuses.filter((status) => status !== 202)).toEqual([])
    expect((await prompt('past')).statusCode).toBe(429)
  })

  it('counts a deliver queued behind a run as no extra run, a running one as a run', async () => {
    table.rows.push(run('s1', 'running'), run('s1', 'pending', 'deliver'))
    expect((await prompt('s2')).statusCode).toBe(202)
    table.rows.push(run('s3', 'running', 'deliver'))
    expect((await prompt('s4')).statusCode).toBe(429)
  })

  it('refuses steering that would start a run past the cap (429, nothing sent), and takes steering of a busy session', async () => {
    table.rows.push(run('s1'), run('s2'))
    const refused = await steer('idle')
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe('5')
    expect(refused.json()).toMatchObject({ error: { code: 'too_many_runs' } })
    expect(sends()).toEqual([])
    expect((await steer('s1')).statusCode).toBe(202)
  })

  it('counts steering of an idle session as a run while its send is in flight, and a burst of it to one session as one run', async () => {
    table.rows.push(run('s1'))
    let release!: () => void
    table.behaviour.hold = new Promise<void>((resolve) => { release = resolve })
    const steering = [steer('idle'), steer('idle'), steer('idle')]
    await vi.waitFor(() => expect(table.sentKeys).toHaveLength(3))
    expect((await prompt('s2')).statusCode).toBe(429)
    release()
    expect((await Promise.all(steering)).map((response) => response.statusCode)).toEqual([202, 202, 202])
    expect((await prompt('s2')).statusCode).toBe(429)
  })

  it('does not refuse a prompt when the admin API does not answer', async () => {
    restate.on('POST /admin/query', { status: 500, body: { message: 'down' } })
    expect((await prompt('s1')).statusCode).toBe(202)
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

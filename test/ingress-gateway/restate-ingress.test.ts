import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { connectIngress, heldCall, restateCall } from '../../ingress-gateway/restate-ingress'
import { tenantOf } from '../../ingress-gateway/tenancy'
import { startFakeRestate, type FakeRestate } from './helpers/fake-restate'
import { bearer, KEY_A, testGateway } from './helpers/gateway'

const ATTACH_PATH = '/restate/invocation/inv_long/attach'
const RESULT = { status: 'completed', text: 'done', stats: { turns: 1 } }

/**
 * A run that ends at its `attempts`-th attach: until then each attach is held, then answered 503 after 1.5 s (the client gives each up after its renewal, 300 ms here), as an
 * attach held past undici's headersTimeout fails (`UND_ERR_HEADERS_TIMEOUT`, 300 s in production).
 */
function runEndingAtAttach(restate: FakeRestate, attempts: number): void {
  let calls = 0
  restate.on(`GET ${ATTACH_PATH}`, async () => {
    if (++calls >= attempts) return { status: 200, body: RESULT }
    await sleep(1_500)
    return { status: 503, body: { message: 'UND_ERR_HEADERS_TIMEOUT' } }
  })
}

const attaches = (restate: FakeRestate): number => restate.requests.filter((request) => request.path === ATTACH_PATH).length

describe('held calls: an attach to a long run', () => {
  let restate: FakeRestate
  beforeAll(async () => {
    restate = await startFakeRestate()
  })
  afterAll(async () => {
    await restate.close()
  })
  beforeEach(() => {
    restate.requests.length = 0
  })

  const attach = (renewMs: number, signal: AbortSignal = new AbortController().signal) => {
    const ingress = connectIngress(restate.url)
    return heldCall(held => ingress.until(held).result({ invocationId: 'inv_long', status: 'Accepted', attachable: true }), signal, renewMs)
  }

  it('re-attaches each time one attach is held for its renewal time, until the run ends', async () => {
    runEndingAtAttach(restate, 3)
    await expect(attach(300)).resolves.toEqual(RESULT)
    // At least the three the run needs: on a loaded machine an answer can take longer than the renewal itself.
    expect(attaches(restate)).toBeGreaterThanOrEqual(3)
  })

  it("stops re-attaching when the caller's signal aborts", async () => {
    runEndingAtAttach(restate, Number.POSITIVE_INFINITY)
    await expect(attach(100, AbortSignal.timeout(250))).rejects.toMatchObject({ code: 'restate_unavailable' })
    const made = attaches(restate)
    await sleep(300)
    expect(attaches(restate)).toBe(made)
  })

  it('POST …/prompts?wait=true holds the request across re-attaches and returns the result', async () => {
    runEndingAtAttach(restate, 3)
    restate.on(`POST /admission/${tenantOf(KEY_A)}/admit`, { status: 200, body: { outcome: 'admitted', invocationId: 'inv_long', queued: false } })
    const app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: `${restate.url}/admin`, attachTimeoutMs: 300 })
    const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts?wait=true', payload: { prompt: 'p' }, headers: bearer(KEY_A) })
    await app.close()
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ invocationId: 'inv_long', status: 'completed', text: 'done' })
    expect(attaches(restate)).toBeGreaterThanOrEqual(3)
  })

  it('POST …/prompts?wait=true attaches again while the admitted run has not reached its partition (404)', async () => {
    let calls = 0
    restate.on(`GET ${ATTACH_PATH}`, () => (++calls <= 2 ? { status: 404, body: { message: 'not found' } } : { status: 200, body: RESULT }))
    restate.on(`POST /admission/${tenantOf(KEY_A)}/admit`, { status: 200, body: { outcome: 'admitted', invocationId: 'inv_long', queued: false } })
    const app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: `${restate.url}/admin`, attachTimeoutMs: 300 })
    const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts?wait=true', payload: { prompt: 'p' }, headers: bearer(KEY_A) })
    await app.close()
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toMatchObject({ invocationId: 'inv_long', status: 'completed', text: 'done' })
    expect(attaches(restate)).toBe(3)
  })
})

describe('a call to Restate that gets no answer', () => {
  it('says a timed-out call may be waiting for the services, and a refused one that Restate is unreachable', async () => {
    const timedOut = Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' })
    const refused = new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }) })
    await expect(restateCall(() => Promise.reject(timedOut))).rejects.toMatchObject({ code: 'restate_unavailable', message: expect.stringMatching(/^Restate did not answer in time \(timed out\): it may be waiting for the services/) as unknown })
    await expect(restateCall(() => Promise.reject(refused))).rejects.toMatchObject({ code: 'restate_unavailable', message: 'Restate is unreachable (ECONNREFUSED)' })
  })
})

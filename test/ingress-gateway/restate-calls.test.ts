import type { FastifyInstance, InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { sessionKey, tenantOf } from '../../ingress-gateway/tenancy'
import { startFakeRestate, type FakeRestate } from './helpers/fake-restate'
import { bearer, KEY_A, testGateway } from './helpers/gateway'

const ADMISSION = `/admission/${tenantOf(KEY_A)}`
const SESSION = `/session/${encodeURIComponent(sessionKey(tenantOf(KEY_A), 's1'))}`

/**
 * The figure of issue #27: the gateway's calls to Restate per request. The stand-in answers every route the gateway
 * may call; each request made is counted, the admin API's (`/admin/…`) apart.
 */
describe('calls to Restate per request', () => {
  let restate: FakeRestate
  let app: FastifyInstance
  beforeAll(async () => {
    restate = await startFakeRestate()
    restate.on(`POST ${ADMISSION}/admit`, { status: 200, body: { outcome: 'admitted', invocationId: 'inv_run', queued: false } })
    restate.on(`POST ${ADMISSION}/steer`, { status: 200, body: { outcome: 'saved', messageId: 'inv_add' } })
    restate.on('POST /resumer/sign_q/answer', { status: 200, body: { outcome: 'answered' } })
    restate.on(`POST ${SESSION}/get`, { status: 200, body: { exists: true, id: 's1', status: 'completed', turns: [], runs: [], pending: [], counts: { turns: 0, runs: 1 }, usage: { usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0, modelRequests: 0, toolCalls: 0, turns: 0 }, page: { from: 0, to: 0, total: 0, limit: 50, nextTurnsAfter: null, previousTurnsAfter: null }, invocation: { invocationId: 'inv_run', status: 'completed', startedAt: 1, endedAt: 2 } } })
    app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: `${restate.url}/admin` })
  })
  afterAll(async () => {
    await app.close()
    await restate.close()
  })

  const calls = async (request: InjectOptions, status: number): Promise<{ ingress: string[]; admin: number }> => {
    restate.requests.length = 0
    expect((await app.inject(request)).statusCode).toBe(status)
    return { ingress: restate.requests.filter(made => !made.path.startsWith('/admin')).map(made => made.path), admin: restate.requests.filter(made => made.path.startsWith('/admin')).length }
  }

  it('a prompt without ?wait makes one call, a steering message one, an answer one, a read of an ended session one; none asks the admin API', async () => {
    const prompt = await calls({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'hi' }, headers: { ...bearer(KEY_A), 'idempotency-key': 'k-1' } }, 202)
    const steering = await calls({ method: 'POST', url: '/v1/sessions/s1/messages', payload: { text: 'and also' }, headers: bearer(KEY_A) }, 202)
    const answer = await calls({ method: 'POST', url: '/v1/awakeables/sign_q/resolve', payload: { answer: 'yes' }, headers: bearer(KEY_A) }, 200)
    const read = await calls({ method: 'GET', url: '/v1/sessions/s1', headers: bearer(KEY_A) }, 200)
    console.info(`gateway calls to Restate: prompt ${prompt.ingress.length} (+${prompt.admin} admin), steering ${steering.ingress.length} (+${steering.admin}), answer ${answer.ingress.length} (+${answer.admin}), read ${read.ingress.length} (+${read.admin})`)
    expect(prompt).toEqual({ ingress: [`${ADMISSION}/admit`], admin: 0 })
    expect(steering).toEqual({ ingress: [`${ADMISSION}/steer`], admin: 0 })
    expect(answer).toEqual({ ingress: ['/resumer/sign_q/answer'], admin: 0 })
    expect(read).toEqual({ ingress: [`${SESSION}/get`], admin: 0 })
  })
})

import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { signAnswerToken } from '../../ingress-gateway/answer-token'
import { bodyFingerprint } from '../../ingress-gateway/idempotency'
import { sessionKey, tenantOf } from '../../ingress-gateway/tenancy'
import { startFakeRestate, type FakeRestate } from './helpers/fake-restate'
import { bearer, KEY_A, testConfig, testGateway } from './helpers/gateway'

const KEY_OF_A = sessionKey(tenantOf(KEY_A), 's1')
const ADMISSION_PATH = `/admission/${tenantOf(KEY_A)}`

describe('steering, prompt policies and approval answers against a stand-in Restate', () => {
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

  it("POST …/messages saves the text through the tenant's admission in one call, and answers 202 with the message id", async () => {
    restate.on(`POST ${ADMISSION_PATH}/steer`, { status: 200, body: { outcome: 'saved', messageId: 'inv_msg1' } })
    const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/messages', payload: { text: 'also check B' }, headers: { ...bearer(KEY_A), 'idempotency-key': 'm-1' } })
    expect(response.statusCode).toBe(202)
    expect(response.json()).toEqual({ sessionId: 's1', id: 'inv_msg1' })
    expect(restate.requests.map(request => [request.path, request.body, request.headers['idempotency-key']])).toEqual([
      [`${ADMISSION_PATH}/steer`, { sessionKey: KEY_OF_A, text: 'also check B', maxRuns: 20, idempotency: { key: 'm-1', fingerprint: bodyFingerprint({ text: 'also check B' }) } }, undefined],
    ])
  })

  it('POST …/messages answers 202 without an id when no services process takes it in time (Restate keeps it)', async () => {
    restate.on(`POST ${ADMISSION_PATH}/steer`, async () => new Promise(() => undefined))
    const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/messages', payload: { text: 'while down' }, headers: bearer(KEY_A) })
    expect(response.statusCode).toBe(202)
    expect(response.json()).toEqual({ sessionId: 's1', note: expect.stringContaining('Restate keeps the message') })
    expect(restate.requests.filter(request => request.path.startsWith('/admin'))).toEqual([])
  })

  it('POST …/messages refuses an empty or extra-field body with 400, and a missing key with 401', async () => {
    for (const payload of [{ text: '' }, { text: 'x', extra: 1 }, { text: 3 }, {}]) {
      const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/messages', payload, headers: bearer(KEY_A) })
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().error.code).toBe('invalid_request')
    }
    expect((await app.inject({ method: 'POST', url: '/v1/sessions/s1/messages', payload: { text: 'x' } })).statusCode).toBe(401)
    expect(restate.requests).toEqual([])
  })

  it('POST …/prompts forwards a valid policy and refuses a malformed one', async () => {
    restate.on(`POST ${ADMISSION_PATH}/admit`, { status: 200, body: { outcome: 'admitted', invocationId: 'inv_run', queued: false } })
    const policy = { approve: ['shell', 'write_file'], deny: ['spawn'] }
    const accepted = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'p', policy }, headers: bearer(KEY_A) })
    expect(accepted.statusCode).toBe(202)
    expect((restate.requests.find(request => request.path.endsWith('/admit'))?.body as { run: unknown }).run).toEqual({ prompt: 'p', policy })
    const refused = [{ approve: 'shell' }, { approve: ['rm -rf'] }, { approve: ['shell', 'shell'] }, { allow: ['shell'] }, { deny: [''] }]
    for (const bad of refused) {
      const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'p', policy: bad }, headers: bearer(KEY_A) })
      expect(response.statusCode, JSON.stringify(bad)).toBe(400)
      expect(response.json().error.message).toMatch(/^body\.policy/)
    }
  })

  it('an approval is answered with { decision, reason }, forwarded as the answer; answer and decision exclude each other', async () => {
    const id = 'sign_approval1'
    const url = `/v1/awakeables/${id}/resolve?token=${signAnswerToken(testConfig().answerSecret, id)}`
    restate.on(`POST /resumer/${id}/answer`, { status: 200, body: { outcome: 'answered' } })
    const denied = await app.inject({ method: 'POST', url, payload: { decision: 'deny', reason: 'not on Fridays' } })
    expect(denied.statusCode).toBe(200)
    expect(restate.requests.find(request => request.path.endsWith('/answer'))?.body).toEqual({ answer: { decision: 'deny', reason: 'not on Fridays' } })
    const refusals: Array<[object, string]> = [
      [{ decision: 'maybe' }, 'body.decision must be equal to one of the allowed values'],
      [{ answer: 'yes', decision: 'approve' }, 'body.answer is not allowed here'],
      [{ reason: 'why' }, 'body.answer is required'],
      [{ answer: 'x', reason: 'why' }, 'body must have property decision when property reason is present'],
      [{}, 'body.answer is required'],
    ]
    for (const [bad, message] of refusals) {
      const response = await app.inject({ method: 'POST', url, payload: bad })
      expect(response.statusCode, JSON.stringify(bad)).toBe(400)
      expect(response.json().error).toEqual({ code: 'invalid_request', message })
    }
  })
})

import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { signAnswerToken } from '../../ingress-gateway/answer-token'
import { bodyFingerprint, restateIdempotencyKey } from '../../ingress-gateway/idempotency'
import { sessionKey, tenantOf } from '../../ingress-gateway/tenancy'
import { startFakeRestate, type FakeRestate } from './helpers/fake-restate'
import { bearer, KEY_A, testConfig, testGateway } from './helpers/gateway'

const KEY_OF_A = sessionKey(tenantOf(KEY_A), 's1')

describe('steering, prompt policies and approval answers against a stand-in Restate', () => {
  let restate: FakeRestate
  let app: FastifyInstance
  beforeAll(async () => {
    restate = await startFakeRestate()
    app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: `${restate.url}/admin` })
  })
  afterAll(async () => {
    await app.close()
    await restate.close()
  })
  beforeEach(() => {
    restate.requests.length = 0
  })

  it('POST …/messages sends the text to the session\'s inbox, waits for the inbox to take it, and answers 202 with the message id', async () => {
    restate.on(`POST /inbox/${encodeURIComponent(KEY_OF_A)}/add/send`, { status: 202, body: { invocationId: 'inv_msg1', status: 'Accepted' } })
    restate.on('GET /restate/invocation/inv_msg1/attach', { status: 200, body: { id: 'inv_msg1' } })
    const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/messages', payload: { text: 'also check B' }, headers: { ...bearer(KEY_A), 'idempotency-key': 'm-1' } })
    expect(response.statusCode).toBe(202)
    expect(response.json()).toEqual({ sessionId: 's1', id: 'inv_msg1' })
    const toRestate = restate.requests.filter(request => request.path !== '/admin/query')
    expect(toRestate.map(request => [request.path, request.body, request.headers['idempotency-key']])).toEqual([
      [`/inbox/${encodeURIComponent(KEY_OF_A)}/add/send`, { text: 'also check B', delivery: 'current' }, restateIdempotencyKey('m-1', bodyFingerprint({ text: 'also check B' }))],
      ['/restate/invocation/inv_msg1/attach', undefined, undefined],
    ])
  })

  it('POST …/messages with no services process to take it resolves the run\'s armed signal through Restate, and still answers 202', async () => {
    restate.on(`POST /inbox/${encodeURIComponent(KEY_OF_A)}/add/send`, { status: 202, body: { invocationId: 'inv_msg2', status: 'Accepted' } })
    restate.on('GET /restate/invocation/inv_msg2/attach', { status: 503, body: { message: 'no deployment answers' } })
    restate.on('POST /admin/query', { status: 200, body: { rows: [{ value_utf8: JSON.stringify('sign_1armed') }] } })
    restate.on('POST /restate/awakeables/sign_1armed/resolve', { status: 202 })
    const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/messages', payload: { text: 'while down' }, headers: bearer(KEY_A) })
    expect(response.statusCode).toBe(202)
    expect(response.json()).toEqual({ sessionId: 's1', id: 'inv_msg2' })
    const query = restate.requests.find(request => request.path === '/admin/query' && (request.body as { query: string }).query.includes('FROM state'))?.body as { query: string }
    expect(query.query).toContain(`service_name = 'inbox' AND service_key = '${KEY_OF_A}' AND key = 'watcher'`)
    expect(restate.requests.map(request => request.path).at(-1)).toBe('/restate/awakeables/sign_1armed/resolve')
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
    restate.on('POST /admin/query', { status: 200, body: { rows: [] } })
    restate.on(`POST /session/${encodeURIComponent(KEY_OF_A)}/run/send`, { status: 202, body: { invocationId: 'inv_run' } })
    const policy = { approve: ['shell', 'write_file'], deny: ['spawn'] }
    const accepted = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'p', policy }, headers: bearer(KEY_A) })
    expect(accepted.statusCode).toBe(202)
    expect(restate.requests.find(request => request.path.endsWith('/run/send'))?.body).toEqual({ prompt: 'p', policy, eventRecording: 'outbox', runSettings: 'journaled' })
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
    restate.on(`POST /resumer/${id}/answer/send`, { status: 200, body: { invocationId: 'inv_answer' } })
    restate.on('GET /restate/invocation/inv_answer/attach', { status: 200, body: { outcome: 'answered' } })
    const denied = await app.inject({ method: 'POST', url, payload: { decision: 'deny', reason: 'not on Fridays' } })
    expect(denied.statusCode).toBe(200)
    expect(restate.requests.find(request => request.path.endsWith('/answer/send'))?.body).toEqual({ answer: { decision: 'deny', reason: 'not on Fridays' } })
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

import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { signAnswerToken } from '../../ingress-gateway/answer-token'
import { bearer, KEY_A, testConfig, testGateway } from './helpers/gateway'

/** Every authenticated route, with a request that passes validation. */
const ROUTES = [
  { method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'hi' } },
  { method: 'POST', url: '/v1/sessions/s1/prompts?wait=true', payload: { prompt: 'hi' } },
  { method: 'GET', url: '/v1/sessions/s1' },
  { method: 'GET', url: '/v1/sessions/s1/events' },
  { method: 'POST', url: '/v1/sessions/s1/cancel' },
  { method: 'POST', url: '/v1/awakeables/sign_1abc/resolve', payload: { answer: 'yes' } },
] as const

describe('API-key auth', () => {
  let app: FastifyInstance
  beforeAll(async () => {
    app = await testGateway()
  })
  afterAll(async () => app.close())

  it.each(ROUTES)('$method $url: 401 without a key', async (route) => {
    const response = await app.inject(route)
    expect(response.statusCode).toBe(401)
    expect(response.json()).toEqual({ error: { code: 'unauthorized', message: expect.stringContaining('Authorization') } })
    expect(response.headers['www-authenticate']).toBe('Bearer')
  })

  it.each(ROUTES)('$method $url: 401 with a wrong key', async (route) => {
    const response = await app.inject({ ...route, headers: bearer(`${KEY_A}x`) })
    expect(response.statusCode).toBe(401)
    expect(response.json().error.code).toBe('unauthorized')
  })

  it.each(ROUTES)('$method $url: a valid key passes auth and reaches (unreachable) Restate', async (route) => {
    const response = await app.inject({ ...route, headers: bearer(KEY_A) })
    expect(response.statusCode).toBe(503)
    expect(response.json().error.code).toBe('restate_unavailable')
  })

  it('rejects malformed Authorization headers', async () => {
    for (const authorization of [KEY_A, `Basic ${KEY_A}`, 'Bearer', 'Bearer  ', `Bearer ${KEY_A} extra`]) {
      const response = await app.inject({ method: 'GET', url: '/v1/sessions/s1', headers: { authorization } })
      expect(response.statusCode, authorization).toBe(401)
    }
  })

  it('accepts the scheme in any case', async () => {
    const response = await app.inject({ method: 'GET', url: '/v1/sessions/s1', headers: { authorization: `bearer ${KEY_A}` } })
    expect(response.statusCode).toBe(503)
  })

  it('checks auth before validation', async () => {
    const response = await app.inject({ method: 'POST', url: '/v1/sessions/bad~id/prompts', payload: { nope: 1 } })
    expect(response.statusCode).toBe(401)
  })

  it('leaves /healthz open and answers unknown routes with 404 route_not_found', async () => {
    expect((await app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' })
    const missing = await app.inject({ method: 'GET', url: '/v1/nothing?x=1', headers: bearer(KEY_A) })
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toEqual({ error: { code: 'route_not_found', message: 'no route GET /v1/nothing' } })
    expect((await app.inject({ method: 'DELETE', url: '/v1/nothing/s1' })).json().error.code).toBe('route_not_found')
  })
})

describe('open mode', () => {
  it('lets requests in without a key', async () => {
    const app = await testGateway({ apiKeys: [], open: true })
    for (const route of ROUTES) {
      const response = await app.inject(route)
      expect(response.statusCode, route.url).toBe(503)
    }
    await app.close()
  })
})

describe('answer tokens', () => {
  let app: FastifyInstance
  const { answerSecret } = testConfig()
  beforeAll(async () => {
    app = await testGateway()
  })
  afterAll(async () => app.close())

  it('403 bad_token for a wrong token, even with a valid key, before body validation', async () => {
    for (const token of ['nope', signAnswerToken(answerSecret, 'sign_1other'), signAnswerToken('another-secret-123456', 'sign_1abc')]) {
      const response = await app.inject({ method: 'POST', url: `/v1/awakeables/sign_1abc/resolve?token=${token}`, payload: { wrong: true }, headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(403)
      expect(response.json().error.code).toBe('bad_token')
    }
  })

  it('a good token passes auth without a key, then reaches (unreachable) Restate', async () => {
    const token = signAnswerToken(answerSecret, 'sign_1abc')
    const response = await app.inject({ method: 'POST', url: `/v1/awakeables/sign_1abc/resolve?token=${token}`, payload: { answer: { approved: true } } })
    expect(response.statusCode).toBe(503)
    expect(response.json().error.code).toBe('restate_unavailable')
  })

  it('a good token still needs a valid body', async () => {
    const token = signAnswerToken(answerSecret, 'sign_1abc')
    const response = await app.inject({ method: 'POST', url: `/v1/awakeables/sign_1abc/resolve?token=${token}`, payload: {} })
    expect(response.statusCode).toBe(400)
    expect(response.json().error.message).toBe('body.answer is required')
  })

  it('the query is validated before the token: a repeated token or an unknown parameter is 400, not 403', async () => {
    const token = signAnswerToken(answerSecret, 'sign_1abc')
    const cases = [
      { query: `token=${token}&token=${token}`, message: 'querystring.token must be string' },
      { query: 'token=a&token=b', message: 'querystring.token must be string' },
      { query: 'token=x&foo=1', message: 'querystring.foo is not allowed' },
      { query: `token=${token}&foo=1`, message: 'querystring.foo is not allowed' },
      { query: `token=${'x'.repeat(129)}`, message: 'querystring.token must NOT have more than 128 characters' },
    ]
    for (const { query, message } of cases) {
      const response = await app.inject({ method: 'POST', url: `/v1/awakeables/sign_1abc/resolve?${query}`, payload: { answer: 1 } })
      expect(response.statusCode, query).toBe(400)
      expect(response.json(), query).toEqual({ error: { code: 'invalid_request', message } })
    }
  })
})

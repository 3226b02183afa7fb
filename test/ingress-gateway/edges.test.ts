import { connect } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeRestate, type FakeRestate } from './helpers/fake-restate'
import { signAnswerToken } from '../../ingress-gateway/answer-token'
import { bearer, KEY_A, testConfig, testGateway } from './helpers/gateway'

const ERROR_SHAPE = { error: { code: expect.any(String) as unknown, message: expect.any(String) as unknown } }

/** Sends `head` (and what `then` writes) on a raw socket to the listening gateway; resolves with all it answered. */
async function rawExchange(port: number, head: string, then?: (write: (text: string) => void) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(head)
      then?.((text) => socket.write(text))
    })
    let answer = ''
    socket.on('data', (chunk: Buffer) => { answer += chunk.toString('utf8') })
    socket.on('close', () => resolve(answer))
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'EPIPE' || error.code === 'ECONNRESET' ? resolve(answer) : reject(error)))
  })
}

function bodyOf(answer: string): unknown {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))
}

describe('edges of the HTTP API', () => {
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

  it('answers bad URL encoding and over-long params with 400 in the error shape', async () => {
    for (const url of ['/v1/sessions/%E0%A4%A/events', `/v1/sessions/${'a'.repeat(2000)}`]) {
      const response = await app.inject({ method: 'GET', url, headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toEqual({ error: { code: 'invalid_request', message: expect.any(String) } })
    }
  })

  it('answers a method the path does not take with 405 and Allow', async () => {
    const response = await app.inject({ method: 'PUT', url: '/v1/sessions/s1', headers: bearer(KEY_A) })
    expect(response.statusCode).toBe(405)
    expect(response.headers.allow).toBe('DELETE, GET, HEAD')
    expect(response.json()).toMatchObject({ error: { code: 'method_not_allowed' } })
    expect((await app.inject({ method: 'PUT', url: '/healthz' })).statusCode).toBe(405)
    expect((await app.inject({ method: 'GET', url: '/v1/awakeables/q1/resolve' })).headers.allow).toBe('POST')
  })

  it('refuses a non-ASCII Idempotency-Key with 400 before reaching Restate', async () => {
    restate.requests.length = 0
    const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'hi' }, headers: { ...bearer(KEY_A), 'idempotency-key': 'clé-ü' } })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ error: { code: 'invalid_request', message: expect.stringContaining('idempotency-key') } })
    expect(restate.requests).toEqual([])
  })

  it('refuses a JSON body nested too deep with 400', async () => {
    const deep = `{"answer":${'['.repeat(5000)}${']'.repeat(5000)}}`
    const response = await app.inject({ method: 'POST', url: '/v1/awakeables/q1/resolve', payload: deep, headers: { ...bearer(KEY_A), 'content-type': 'application/json' } })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ error: { code: 'invalid_request', message: expect.stringContaining('nested deeper') } })
  })

  it("keeps a plugin's 4xx a 4xx (a /docs path outside its root)", async () => {
    for (const url of ['/docs/static/%2e%2e%5cpackage.json', '/docs/static/a%00b', '/docs/static/..%2f..%2fpackage.json']) {
      const response = await app.inject({ method: 'GET', url })
      expect([url, response.statusCode >= 400 && response.statusCode < 500]).toEqual([url, true])
      expect(response.json()).toEqual(ERROR_SHAPE)
    }
  })
})

describe('edges of the HTTP connection (listening gateway)', () => {
  let app: FastifyInstance
  let port: number
  beforeAll(async () => {
    app = await testGateway({ requestTimeoutMs: 200 })
    await app.listen({ port: 0, host: '127.0.0.1' })
    port = (app.server.address() as { port: number }).port
  })
  afterAll(async () => {
    await app.close()
  })

  it('cuts off a body trickled one byte at a time with 408 request_timeout', async () => {
    const head = `POST /v1/sessions/s1/prompts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY_A}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`
    let trickle: NodeJS.Timeout | undefined
    const answer = await rawExchange(port, head, (write) => {
      // One byte every 10 ms: the body would take 1000 s to arrive. A producer, not a synchronisation.
      trickle = setInterval(() => write('a'), 10)
    })
    clearInterval(trickle)
    expect(answer).toMatch(/^HTTP\/1.1 408/)
    expect(bodyOf(answer)).toEqual({ error: { code: 'request_timeout', message: expect.any(String) } })
  })

  it('answers question ids that are dot segments with 404, even with a valid answer token (raw paths are not normalised)', async () => {
    for (const id of ['.', '..']) {
      const token = signAnswerToken(testConfig().answerSecret, id)
      const body = '{"answer":"x"}'
      const answer = await rawExchange(port, `POST /v1/awakeables/${id}/resolve?token=${token} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`)
      expect([id, answer.slice(0, 12)]).toEqual([id, 'HTTP/1.1 404'])
      expect(bodyOf(answer)).toMatchObject({ error: { code: 'question_not_found' } })
    }
  })

  it('answers malformed HTTP with 400 in the error shape', async () => {
    const answer = await rawExchange(port, 'GET /healthz HTTP/1.1\r\nHost x\r\n\r\n')
    expect(answer).toMatch(/^HTTP\/1.1 400/)
    expect(bodyOf(answer)).toEqual({ error: { code: 'invalid_request', message: expect.stringContaining('malformed') } })
  })

  it('answers headers that are too large with 431 in the error shape', async () => {
    const answer = await rawExchange(port, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    expect(answer).toMatch(/^HTTP\/1.1 431/)
    expect(bodyOf(answer)).toEqual({ error: { code: 'headers_too_large', message: expect.any(String) } })
  })
})

import type { FastifyInstance, InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bearer, KEY_A, testGateway } from './helpers/gateway'

const auth = bearer(KEY_A)

async function expectInvalid(app: FastifyInstance, request: InjectOptions, message: string | RegExp): Promise<void> {
  const response = await app.inject({ ...request, headers: { ...auth, ...request.headers } })
  expect(response.statusCode, `${request.url as string} ${JSON.stringify(request.payload)?.slice(0, 80)}`).toBe(400)
  const body = response.json()
  expect(body.error.code).toBe('invalid_request')
  expect(body.error.message).toMatch(message)
}

const prompts = (payload: unknown, url = '/v1/sessions/s1/prompts'): InjectOptions => ({ method: 'POST', url, payload: payload as NonNullable<InjectOptions['payload']> })

describe('request validation', () => {
  let app: FastifyInstance
  beforeAll(async () => {
    app = await testGateway({ bodyLimitBytes: 256 * 1024 })
  })
  afterAll(async () => app.close())

  describe('POST /v1/sessions/:sessionId/prompts', () => {
    it('requires a prompt', async () => {
      await expectInvalid(app, prompts({}), 'body.prompt is required')
      await expectInvalid(app, prompts({ model: 'm' }), 'body.prompt is required')
    })

    it('rejects wrong types without coercing them', async () => {
      await expectInvalid(app, prompts({ prompt: 42 }), 'body.prompt must be string')
      await expectInvalid(app, prompts({ prompt: ['hi'] }), 'body.prompt must be string')
      await expectInvalid(app, prompts({ prompt: 'hi', model: 3 }), 'body.model must be string')
      await expectInvalid(app, prompts({ prompt: 'hi', maxTurns: '5' }), 'body.maxTurns must be integer')
      await expectInvalid(app, prompts({ prompt: 'hi', maxTurns: 1.5 }), 'body.maxTurns must be integer')
      await expectInvalid(app, prompts([{ prompt: 'hi' }]), 'body must be object')
      await expectInvalid(app, { ...prompts('"hi"'), headers: { 'content-type': 'application/json' } }, 'body must be object')
    })

    it('bounds the prompt and maxTurns', async () => {
      await expectInvalid(app, prompts({ prompt: '' }), 'body.prompt must NOT have fewer than 1 characters')
      await expectInvalid(app, prompts({ prompt: 'x'.repeat(100_001) }), 'body.prompt must NOT have more than 100000 characters')
      await expectInvalid(app, prompts({ prompt: 'hi', maxTurns: 0 }), 'body.maxTurns must be >= 1')
      await expectInvalid(app, prompts({ prompt: 'hi', maxTurns: 501 }), 'body.maxTurns must be <= 500')
    })

    it('rejects extra properties by name', async () => {
      await expectInvalid(app, prompts({ prompt: 'hi', temperature: 1 }), 'body.temperature is not allowed')
    })

    it('rejects bad session ids', async () => {
      for (const id of ['a~b', 'a.b', 'x'.repeat(129), 'a%20b', '%C3%A9', 'a%2Fb']) {
        await expectInvalid(app, prompts({ prompt: 'hi' }, `/v1/sessions/${id}/prompts`), /^params\.sessionId must match pattern/)
      }
    })

    it('validates the query and the Idempotency-Key header', async () => {
      await expectInvalid(app, prompts({ prompt: 'hi' }, '/v1/sessions/s1/prompts?wait=maybe'), 'querystring.wait must be boolean')
      await expectInvalid(app, prompts({ prompt: 'hi' }, '/v1/sessions/s1/prompts?stream=true'), 'querystring.stream is not allowed')
      await expectInvalid(app, { ...prompts({ prompt: 'hi' }), headers: { 'idempotency-key': 'k'.repeat(201) } }, /^headers\.idempotency-key must NOT have more than 200/)
      await expectInvalid(app, { ...prompts({ prompt: 'hi' }), headers: { 'idempotency-key': '' } }, /^headers\.idempotency-key must NOT have fewer than 1/)
    })

    it('accepts the longest session id', async () => {
      const response = await app.inject({ ...prompts({ prompt: 'hi' }, `/v1/sessions/${'x'.repeat(128)}/prompts`), headers: auth })
      expect(response.statusCode).toBe(503)
    })

    it('accepts a valid request up to Restate (unreachable here)', async () => {
      const response = await app.inject({ ...prompts({ prompt: 'hi', model: 'm', maxTurns: 500 }, '/v1/sessions/A-z_09/prompts?wait=false'), headers: { ...auth, 'idempotency-key': 'k'.repeat(200) } })
      expect(response.statusCode).toBe(503)
    })
  })

  describe('bodies', () => {
    it('413 payload_too_large over the body limit', async () => {
      const response = await app.inject({ ...prompts({ prompt: 'x'.repeat(300 * 1024) }), headers: auth })
      expect(response.statusCode).toBe(413)
      expect(response.json().error.code).toBe('payload_too_large')
    })

    it('415 unsupported_media_type for non-JSON content types', async () => {
      for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
        const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: 'prompt=hi', headers: { ...auth, 'content-type': contentType } })
        expect(response.statusCode, contentType).toBe(415)
        expect(response.json()).toEqual({ error: { code: 'unsupported_media_type', message: `content-type ${contentType} is not supported; send application/json` } })
      }
    })

    it('400 for malformed JSON', async () => {
      const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: '{"prompt": ', headers: { ...auth, 'content-type': 'application/json' } })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toEqual({ error: { code: 'invalid_request', message: 'body is not valid JSON' } })
    })

    it('400 for prototype poisoning, saying why (the body is valid JSON)', async () => {
      const poisoned = ['{"prompt":"hi","__proto__":{"x":1}}', '{"__proto__":{}, "prompt":"hi"}', '{"prompt":"hi","policy":{"constructor":{"prototype":{"x":1}}}}']
      for (const payload of poisoned) {
        const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload, headers: { ...auth, 'content-type': 'application/json' } })
        expect(response.statusCode, payload).toBe(400)
        expect(response.json(), payload).toEqual({ error: { code: 'invalid_request', message: 'body must not contain a "__proto__" or "constructor" key' } })
      }
    })

    it('an empty or whitespace-only body counts as none: required bodies fail validation, bodiless routes pass', async () => {
      for (const payload of ['', ' ', ' \t\r\n ']) {
        await expectInvalid(app, { method: 'POST', url: '/v1/sessions/s1/prompts', payload, headers: { 'content-type': 'application/json' } }, 'body must be object')
        const cancel = await app.inject({ method: 'POST', url: '/v1/sessions/s1/cancel', payload, headers: { ...auth, 'content-type': 'application/json' } })
        expect(cancel.statusCode, JSON.stringify(payload)).toBe(503)
      }
      await expectInvalid(app, { method: 'POST', url: '/v1/sessions/s1/prompts' }, 'body must be object')
    })

    it('whitespace that JSON does not allow is not an empty body', async () => {
      await expectInvalid(app, { method: 'POST', url: '/v1/sessions/s1/cancel', payload: '\u00a0', headers: { 'content-type': 'application/json' } }, 'body is not valid JSON')
    })

    it('415 unsupported_media_type for a charset other than UTF-8', async () => {
      for (const contentType of ['application/json; charset=utf-16le', 'application/json;charset=ISO-8859-1', 'application/json; charset="utf-16"', 'application/json; charset=utf8']) {
        const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: '{"prompt":"hi"}', headers: { ...auth, 'content-type': contentType } })
        expect(response.statusCode, contentType).toBe(415)
        expect(response.json()).toEqual({ error: { code: 'unsupported_media_type', message: `content-type ${contentType} is not supported; send application/json` } })
      }
    })

    it('accepts UTF-8 in any case, quoted or not, and no charset', async () => {
      for (const contentType of ['application/json', 'application/json; charset=utf-8', 'application/json; charset=UTF-8', 'application/json;charset="Utf-8"', 'Application/JSON; Charset=utf-8']) {
        const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: '{"prompt":"hi"}', headers: { ...auth, 'content-type': contentType } })
        expect(response.statusCode, contentType).toBe(503)
      }
    })

    it('400 for a body that is not valid UTF-8, instead of passing on U+FFFD', async () => {
      const invalid = [Buffer.from([0x7b, 0x22, 0x70, 0x72, 0x6f, 0x6d, 0x70, 0x74, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), Buffer.concat([Buffer.from('{"prompt":"'), Buffer.from([0xc3]), Buffer.from('"}')]), Buffer.from([0xed, 0xa0, 0x80])]
      for (const payload of invalid) {
        await expectInvalid(app, { method: 'POST', url: '/v1/sessions/s1/prompts', payload, headers: { 'content-type': 'application/json' } }, /^body is not valid UTF-8$/)
      }
    })

    it('passes valid multi-byte UTF-8 on unchanged', async () => {
      const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: Buffer.from('{"prompt":"h\u00e9 \u{1F600}"}'), headers: { ...auth, 'content-type': 'application/json' } })
      expect(response.statusCode).toBe(503)
    })
  })

  describe('other routes', () => {
    it('GET /v1/sessions/:sessionId checks the id', async () => {
      await expectInvalid(app, { method: 'GET', url: `/v1/sessions/${'x'.repeat(129)}` }, /^params\.sessionId/)
    })

    it('POST /v1/sessions/:sessionId/cancel checks the id', async () => {
      await expectInvalid(app, { method: 'POST', url: '/v1/sessions/no~pe/cancel' }, /^params\.sessionId/)
    })

    it('POST /v1/sessions/:sessionId/cancel and /messages take no query parameters', async () => {
      await expectInvalid(app, { method: 'POST', url: '/v1/sessions/s1/cancel?x=1' }, 'querystring.x is not allowed')
      await expectInvalid(app, { method: 'POST', url: '/v1/sessions/s1/messages?x=1', payload: { text: 'hi' } }, 'querystring.x is not allowed')
      const cancel = await app.inject({ method: 'POST', url: '/v1/sessions/s1/cancel', headers: auth })
      expect(cancel.statusCode).toBe(503)
      const message = await app.inject({ method: 'POST', url: '/v1/sessions/s1/messages', payload: { text: 'hi' }, headers: auth })
      expect(message.statusCode).toBe(503)
    })

    it('GET /v1/sessions/:sessionId/events checks after and Last-Event-ID', async () => {
      await expectInvalid(app, { method: 'GET', url: '/v1/sessions/s1/events?after=-1' }, 'querystring.after must be >= 0')
      await expectInvalid(app, { method: 'GET', url: '/v1/sessions/s1/events?after=abc' }, 'querystring.after must be integer')
      await expectInvalid(app, { method: 'GET', url: '/v1/sessions/s1/events?after=1e20' }, 'querystring.after must be <= 999999999999999')
      await expectInvalid(app, { method: 'GET', url: '/v1/sessions/s1/events', headers: { 'last-event-id': 'abc' } }, /^headers\.last-event-id must match pattern/)
      await expectInvalid(app, { method: 'GET', url: '/v1/sessions/bad~id/events' }, /^params\.sessionId/)
    })

    it('POST /v1/awakeables/:id/resolve needs exactly { answer }', async () => {
      const url = '/v1/awakeables/sign_1abc/resolve'
      await expectInvalid(app, { method: 'POST', url, payload: {} }, 'body.answer is required')
      await expectInvalid(app, { method: 'POST', url, payload: { answer: 'y', note: 'n' } }, 'body.note is not allowed')
      await expectInvalid(app, { method: 'POST', url }, 'body must be object')
      await expectInvalid(app, { method: 'POST', url: `/v1/awakeables/${'x'.repeat(513)}/resolve`, payload: { answer: 1 } }, /^params\.id must NOT have more than 512/)
      for (const answer of [null, 0, false, 'text', ['a'], { nested: { ok: true } }]) {
        const response = await app.inject({ method: 'POST', url, payload: { answer }, headers: auth })
        expect(response.statusCode, JSON.stringify(answer)).toBe(503)
      }
    })
  })
})

import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadGatewayConfig } from '../../ingress-gateway/config'
import { bearer, KEY_A, testGateway } from './helpers/gateway'

const PAGE = 'https://app.example.com'
const preflight = (origin: string, url = '/v1/sessions/s1/chat') => ({
  method: 'OPTIONS' as const, url, headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
})

describe('CORS with an allow-list of origins', () => {
  let app: FastifyInstance
  beforeAll(async () => {
    app = await testGateway({ corsOrigins: [PAGE] })
  })
  afterAll(async () => {
    await app.close()
  })

  it('answers the preflight of an allowed origin 204 with the methods and headers a chat page needs', async () => {
    const response = await app.inject(preflight(PAGE))
    expect(response.statusCode).toBe(204)
    expect(response.headers['access-control-allow-origin']).toBe(PAGE)
    expect(response.headers['access-control-allow-methods']).toBe('GET, HEAD, POST')
    expect(response.headers['access-control-allow-headers']).toBe('authorization, content-type, idempotency-key, last-event-id')
    expect(response.headers.vary).toMatch(/origin/i)
  })

  it('refuses the preflight of another origin with 403 origin_not_allowed, without CORS headers', async () => {
    const response = await app.inject(preflight('https://evil.example.com'))
    expect(response.statusCode).toBe(403)
    expect(response.json()).toEqual({ error: { code: 'origin_not_allowed', message: expect.stringContaining('evil.example.com') } })
    expect(response.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('answers preflights on every path, an unknown one included', async () => {
    expect((await app.inject(preflight(PAGE, '/v1/sessions/s1/chat/stream'))).statusCode).toBe(204)
    expect((await app.inject(preflight(PAGE, '/nowhere'))).statusCode).toBe(204)
  })

  it("gives an allowed origin's requests Access-Control-Allow-Origin and exposes the stream header, errors included", async () => {
    const response = await app.inject({ method: 'GET', url: '/v1/sessions/s1', headers: { origin: PAGE } })
    expect(response.statusCode).toBe(401)
    expect(response.headers['access-control-allow-origin']).toBe(PAGE)
    expect(response.headers['access-control-expose-headers']).toContain('x-vercel-ai-ui-message-stream')
  })

  it("gives another origin's requests no Access-Control-Allow-Origin (Vary: Origin only)", async () => {
    const response = await app.inject({ method: 'GET', url: '/healthz', headers: { origin: 'https://evil.example.com' } })
    expect(response.statusCode).toBe(200)
    expect(response.headers['access-control-allow-origin']).toBeUndefined()
    expect(response.headers.vary).toMatch(/origin/i)
  })

  it('leaves an OPTIONS that is not a preflight to the routes (405 with Allow)', async () => {
    const response = await app.inject({ method: 'OPTIONS', url: '/v1/sessions/s1/chat', headers: { origin: PAGE, ...bearer(KEY_A) } })
    expect(response.statusCode).toBe(405)
  })
})

describe('CORS by default', () => {
  it('sends no CORS header at all, and refuses every preflight', async () => {
    const app = await testGateway()
    try {
      const response = await app.inject({ method: 'GET', url: '/healthz', headers: { origin: PAGE } })
      expect(Object.keys(response.headers).filter(name => name.startsWith('access-control-'))).toEqual([])
      expect(response.headers.vary).toBeUndefined()
      const refused = await app.inject(preflight(PAGE))
      expect(refused.statusCode).toBe(403)
      expect(Object.keys(refused.headers).filter(name => name.startsWith('access-control-'))).toEqual([])
    } finally {
      await app.close()
    }
  })
})

describe('GATEWAY_CORS_ORIGINS', () => {
  const env = (origins: string) => ({ GATEWAY_API_KEYS: KEY_A, GATEWAY_CORS_ORIGINS: origins })

  it('reads a comma-separated list of origins', () => {
    expect(loadGatewayConfig(env('https://app.example.com, http://localhost:5173')).corsOrigins).toEqual(['https://app.example.com', 'http://localhost:5173'])
    expect(loadGatewayConfig({ GATEWAY_API_KEYS: KEY_A }).corsOrigins).toEqual([])
  })

  it('refuses what is not an origin (a path, a wildcard, another scheme)', () => {
    for (const bad of ['https://app.example.com/chat', '*', 'ftp://files.example.com', 'app.example.com']) {
      expect(() => loadGatewayConfig(env(bad)), bad).toThrow(/GATEWAY_CORS_ORIGINS/)
    }
  })
})

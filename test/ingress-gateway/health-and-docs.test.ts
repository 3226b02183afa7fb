import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testGateway } from './helpers/gateway'

describe('health, readiness and API docs', () => {
  let app: FastifyInstance
  beforeAll(async () => {
    app = await testGateway()
  })
  afterAll(async () => app.close())

  it('healthz answers 200 without auth', async () => {
    const response = await app.inject({ method: 'GET', url: '/healthz' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ status: 'ok' })
  })

  it('readyz answers 503 restate_unavailable when Restate is down', async () => {
    const response = await app.inject({ method: 'GET', url: '/readyz' })
    expect(response.statusCode).toBe(503)
    expect(response.json()).toEqual({ error: { code: 'restate_unavailable', message: 'Restate admin API and ingress not responding' } })
  })

  it('serves the OpenAPI document with every route, bearer security and the error schema', async () => {
    const response = await app.inject({ method: 'GET', url: '/openapi.json' })
    expect(response.statusCode).toBe(200)
    const spec = response.json()
    expect(spec.openapi).toMatch(/^3\./)
    expect(spec.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(Object.keys(spec.paths).sort()).toEqual([
      '/healthz',
      '/readyz',
      '/v1/ag-ui',
      '/v1/ag-ui/capabilities',
      '/v1/awakeables/{id}/resolve',
      '/v1/sessions',
      '/v1/sessions/{sessionId}',
      '/v1/sessions/{sessionId}/cancel',
      '/v1/sessions/{sessionId}/chat',
      '/v1/sessions/{sessionId}/chat/stream',
      '/v1/sessions/{sessionId}/events',
      '/v1/sessions/{sessionId}/messages',
      '/v1/sessions/{sessionId}/prompts',
    ])
    const prompts = spec.paths['/v1/sessions/{sessionId}/prompts'].post
    expect(prompts.security).toEqual([{ bearerAuth: [] }])
    expect(prompts.requestBody.content['application/json'].schema.required).toEqual(['prompt'])
    expect(Object.keys(prompts.responses)).toEqual(expect.arrayContaining(['200', '202', '4XX', '5XX']))
    expect(spec.paths['/v1/sessions/{sessionId}/events'].get.responses['200'].content).toHaveProperty(['text/event-stream'])
  })

  it('serves Swagger UI at /docs', async () => {
    const response = await app.inject({ method: 'GET', url: '/docs' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toContain('text/html')
  })
})

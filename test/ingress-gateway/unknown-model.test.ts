import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deploymentModels } from '../../src/providers'
import { bearer, KEY_A, testGateway } from './helpers/gateway'

const user = (text: string) => ({ id: 'u1', role: 'user', parts: [{ type: 'text', text }] })

describe('a prompt naming a model the deployment does not serve', () => {
  let app: FastifyInstance
  beforeAll(async () => {
    const { catalog } = deploymentModels({ ANTHROPIC_API_KEY: 'k', ZIDANE_PROVIDERS: JSON.stringify({ openai: { type: 'openai-compatible', models: ['gpt-4o'] } }) })
    app = await testGateway({ models: catalog, restateIngressUrl: 'http://127.0.0.1:9' })
  })
  afterAll(async () => app.close())

  it('is 400 unknown_model naming the known ones, on the prompts and the chat route, before Restate is asked', async () => {
    for (const [url, payload] of [['/v1/sessions/s1/prompts', { prompt: 'hi', model: 'gpt-4o' }], ['/v1/sessions/s1/chat', { messages: [user('hi')], model: 'mistral:large' }]] as const) {
      const response = await app.inject({ method: 'POST', url, payload, headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(400)
      const { error } = response.json<{ error: { code: string; message: string } }>()
      expect(error.code).toBe('unknown_model')
      expect(error.message).toContain('openai:gpt-4o')
      expect(error.message).toContain('anthropic:claude-sonnet-4-6')
    }
  })

  it('lets a known provider:model through to the admission', async () => {
    const response = await app.inject({ method: 'POST', url: '/v1/sessions/s1/prompts', payload: { prompt: 'hi', model: 'openai:gpt-4o' }, headers: bearer(KEY_A) })
    expect(response.json<{ error?: { code: string } }>().error?.code).not.toBe('unknown_model')
  })
})

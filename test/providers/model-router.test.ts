import { describe, expect, it } from 'vitest'
import { demoProvider, deploymentModels, knownModels, modelRouter, resolveModelName } from '../../src/providers'
import type { ModelRequest, Provider } from '../../src/providers'

const providers = JSON.stringify({ openai: { type: 'openai-compatible', baseURL: 'http://x/v1', models: ['gpt-4o', 'gpt-4o-mini'] }, ollama: { type: 'openai-compatible', defaultModel: 'llama3:8b' } })

describe('model names: provider:model', () => {
  it('resolves prefixed and bare names against the catalog; a colon inside a bare name stays in the model', () => {
    const { catalog } = deploymentModels({ ANTHROPIC_API_KEY: 'k', ZIDANE_PROVIDERS: providers })
    expect(catalog.defaultProvider).toBe('anthropic')
    expect(resolveModelName(catalog, 'openai:gpt-4o')).toEqual({ provider: 'openai', model: 'gpt-4o' })
    expect(resolveModelName(catalog, 'anthropic:claude-sonnet-4-5')).toEqual({ provider: 'anthropic', model: 'claude-sonnet-4-5' })
    expect(resolveModelName(catalog, 'claude-sonnet-4-5')).toEqual({ provider: 'anthropic', model: 'claude-sonnet-4-5' })
    expect(resolveModelName(catalog, 'ollama:llama3:8b')).toEqual({ provider: 'ollama', model: 'llama3:8b' })
    expect(resolveModelName(catalog, undefined)).toEqual({ provider: 'anthropic', model: 'claude-sonnet-4-6' })
  })

  it('names the known models when a provider or model is unknown', () => {
    const { catalog } = deploymentModels({ ANTHROPIC_API_KEY: 'k', ZIDANE_PROVIDERS: providers })
    const gpt = resolveModelName(catalog, 'gpt-4o')
    expect(gpt).toMatchObject({ unknown: expect.stringContaining('unknown model "gpt-4o"') as string })
    expect(JSON.stringify(gpt)).toContain('openai:gpt-4o')
    expect(JSON.stringify(gpt)).toContain('ollama:*')
    expect(resolveModelName(catalog, 'mistral:large')).toMatchObject({ unknown: expect.stringContaining('unknown provider "mistral"') as string })
    expect(resolveModelName(catalog, 'openai:gpt-5-turbo')).toMatchObject({ unknown: expect.stringContaining('unknown model "openai:gpt-5-turbo"') as string })
  })

  it('without an Anthropic key serves the demo model only, so gpt-4o is refused instead of answered by it', () => {
    const { catalog } = deploymentModels({})
    expect(knownModels(catalog)).toBe('demo:zidane-demo')
    expect(resolveModelName(catalog, 'gpt-4o')).toHaveProperty('unknown')
    expect(resolveModelName(catalog, 'zidane-demo')).toEqual({ provider: 'demo', model: 'zidane-demo' })
  })

  it('takes the default provider and model from ZIDANE_DEFAULT_PROVIDER and ZIDANE_MODEL, and refuses keys in ZIDANE_PROVIDERS', () => {
    expect(deploymentModels({ ZIDANE_PROVIDERS: providers, ZIDANE_MODEL: 'openai:gpt-4o-mini' }).catalog).toMatchObject({ defaultProvider: 'openai', providers: { openai: { defaultModel: 'gpt-4o-mini' } } })
    expect(deploymentModels({ ZIDANE_PROVIDERS: providers, ZIDANE_DEFAULT_PROVIDER: 'ollama' }).catalog.defaultProvider).toBe('ollama')
    expect(() => deploymentModels({ ZIDANE_PROVIDERS: '{"x":{"type":"openai-compatible","apiKey":"sk-secret"}}' })).toThrow(/apiKeyEnv/)
    expect(() => deploymentModels({ ZIDANE_DEFAULT_PROVIDER: 'nope' })).toThrow(/names no provider/)
  })

  it('routes each request to its provider with the bare model, and fails an unknown one terminally', async () => {
    const seen: string[] = []
    const recording = (name: string): Provider => ({ name, model: `${name}-default`, stream: async (request) => { seen.push(`${name}:${request.model ?? ''}`); return demoProvider().stream(request, () => {}) } })
    const { catalog } = deploymentModels({ ANTHROPIC_API_KEY: 'k', ZIDANE_PROVIDERS: providers })
    const router = modelRouter({ catalog, providers: { anthropic: recording('anthropic'), openai: recording('openai'), ollama: recording('ollama') } })
    const request = (model?: string): ModelRequest => ({ ...(model ? { model } : {}), messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [], signal: new AbortController().signal })
    await router.stream(request('openai:gpt-4o'), () => {})
    await router.stream(request(), () => {})
    await router.stream(request('ollama:qwen2.5'), () => {})
    expect(seen).toEqual(['openai:gpt-4o', 'anthropic:claude-sonnet-4-6', 'ollama:qwen2.5'])
    await expect(router.stream(request('gpt-4o'), () => {})).rejects.toMatchObject({ code: 'provider_unknown_model', retryable: false })
  })
})

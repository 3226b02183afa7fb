import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ConfigurationError } from '../../../src/errors'
import { openaiCompatible } from '../../../src/providers'
import type { Message, ModelDelta, ModelRequest } from '../../../src/providers'
import { startOpenAiServer } from '../../../support/openai-server'
import type { FakeOpenAiServer } from '../../../support/openai-server'

let server: FakeOpenAiServer
beforeEach(async () => { server = await startOpenAiServer({ apiKey: 'sk-test' }) })
afterEach(() => server.close())

const provider = (options: Partial<Parameters<typeof openaiCompatible>[0]> = {}) =>
  openaiCompatible({ apiKey: 'sk-test', baseURL: server.baseURL, model: 'gpt-4o', maxRetries: 0, ...options })
const ask = (messages: Message[], overrides: Partial<ModelRequest> = {}): ModelRequest => ({ messages, tools: [], signal: new AbortController().signal, ...overrides })
const user = (text: string): Message => ({ role: 'user', content: [{ type: 'text', text }] })

describe('openai-compatible provider', () => {
  it('streams with include_usage, sends the system prompt, tools and the key, and prices cached input apart', async () => {
    server.enqueue({ kind: 'chat', text: 'hi', usage: { prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 400 } })
    const tools = [{ name: 'grep', description: 'search', inputSchema: { type: 'object', properties: {} } }]
    const response = await provider().stream(ask([user('hello')], { system: 'sys', tools, maxTokens: 64 }), () => {})
    const body = server.requests[0]?.body
    expect(body).toMatchObject({ model: 'gpt-4o', stream: true, stream_options: { include_usage: true }, max_completion_tokens: 64, messages: [{ role: 'system', content: 'sys' }, { role: 'user', content: 'hello' }] })
    expect(body?.['tools']).toEqual([{ type: 'function', function: { name: 'grep', description: 'search', parameters: { type: 'object', properties: {} } } }])
    expect(server.requests[0]?.apiKey).toBe('sk-test')
    expect(response.usage).toEqual({ inputTokens: 600, outputTokens: 100, cacheReadTokens: 400, cacheWriteTokens: 0 })
    expect(response.costUsd).toBeCloseTo((600 * 2.5 + 400 * 1.25 + 100 * 10) / 1e6, 12)
    expect(response.requestId).toBe('req_oai_000001')
  })

  it('reads reasoning_content as thinking, and sends it back only when asked, never signed thinking', async () => {
    server.enqueue({ kind: 'chat', reasoning: 'let me think about it', text: 'done' }, { kind: 'chat', text: 'again' }, { kind: 'chat', text: 'third' })
    const deltas: ModelDelta[] = []
    const first = await provider().stream(ask([user('q')]), delta => deltas.push(delta))
    expect(first.content).toEqual([{ type: 'thinking', thinking: 'let me think about it' }, { type: 'text', text: 'done' }])
    expect(deltas.filter(delta => delta.kind === 'thinking').map(delta => delta.delta).join('')).toBe('let me think about it')
    const history: Message[] = [user('q'), { role: 'assistant', content: [{ type: 'thinking', thinking: 'signed', signature: 's' }, ...first.content] }, user('more')]
    await provider().stream(ask(history), () => {})
    await provider({ sendReasoning: true }).stream(ask(history), () => {})
    expect(server.requests[1]?.body?.['messages']).toEqual([{ role: 'user', content: 'q' }, { role: 'assistant', content: 'done' }, { role: 'user', content: 'more' }])
    expect((server.requests[2]?.body?.['messages'] as unknown[])[1]).toEqual({ role: 'assistant', content: 'done', reasoning_content: 'let me think about it' })
  })

  it('maps tool results to tool messages and their images to a user message after them', async () => {
    server.enqueue({ kind: 'chat', text: 'seen' })
    const history: Message[] = [
      user('look'),
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_a', name: 'shot', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 'call_a', content: [{ type: 'text', text: 'took it' }, { type: 'image', mediaType: 'image/png', data: 'AAAA' }] }] },
    ]
    await provider().stream(ask(history), () => {})
    expect(server.requests[0]?.problems).toEqual([])
    expect((server.requests[0]?.body?.['messages'] as unknown[]).slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'shot', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_a', content: 'took it\n[image image/png below]' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
    ])
  })

  it('leaves out a tool call cut by length and flags it; keeps the complete ones', async () => {
    server.enqueue({ kind: 'chat', toolCalls: [{ id: 'c1', name: 'read', arguments: { path: 'a' } }, { id: 'c2', name: 'read', arguments: '{"path": "/tm' }], finishReason: 'length' })
    const response = await provider().stream(ask([user('q')]), () => {})
    expect(response.stopReason).toBe('max_tokens')
    expect(response.truncatedToolUse).toBe(true)
    expect(response.content).toEqual([{ type: 'tool_use', id: 'c1', name: 'read', input: { path: 'a' } }])
  })

  it('fails retryably on invalid tool JSON, a stream without a finish reason, and an idle stream', async () => {
    server.enqueue({ kind: 'chat', toolCalls: [{ id: 'c1', name: 'read', arguments: '{"path": ' }] })
    await expect(provider().stream(ask([user('q')]), () => {})).rejects.toMatchObject({ code: 'provider_invalid_response', retryable: true })
    server.enqueue({ kind: 'end', afterChunks: 2 })
    await expect(provider().stream(ask([user('q')]), () => {})).rejects.toMatchObject({ code: 'provider_stream_incomplete', retryable: true })
    server.enqueue({ kind: 'stall', afterChunks: 2 })
    await expect(provider({ idleTimeoutMs: 100 }).stream(ask([user('q')]), () => {})).rejects.toMatchObject({ code: 'provider_stream_idle', retryable: true })
  })

  it('costs 0 without a usage chunk, and maps 401 terminal and 500 retryable', async () => {
    server.enqueue({ kind: 'chat', text: 'x', omitUsage: true })
    expect(await provider().stream(ask([user('q')]), () => {})).toMatchObject({ costUsd: 0, usage: { inputTokens: 0, outputTokens: 0 } })
    await expect(provider({ apiKey: 'wrong' }).stream(ask([user('q')]), () => {})).rejects.toMatchObject({ code: 'provider_unauthorized', retryable: false, status: 401 })
    server.enqueue({ kind: 'error', status: 500 })
    await expect(provider().stream(ask([user('q')]), () => {})).rejects.toMatchObject({ code: 'provider_internal_error', retryable: true })
  })

  it('refuses an empty key at construction', () => {
    expect(() => openaiCompatible({ apiKey: '', model: 'm' })).toThrow(ConfigurationError)
  })
})

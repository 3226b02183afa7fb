import { afterEach, describe, expect, it, vi } from 'vitest'
import type { ToolSpec } from '../../../src/providers'
import { anthropic } from '../../../src/providers/anthropic'
import { rejectionOf, streamAll, testApiKey, testModel, useFakeServer, userRequest } from './fixture'

const weatherTool: ToolSpec = { name: 'get_weather', description: 'Weather for a city', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }

describe('anthropic provider: round trips', () => {
  const fixture = useFakeServer()
  afterEach(() => { vi.unstubAllEnvs() })

  it('streams text, reports deltas and returns the final message with usage and request id', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'Hello there, general Kenobi' }], usage: { input_tokens: 12, output_tokens: 7 } })
    const { response, deltas } = await streamAll(fixture.provider(), userRequest('hi'))
    expect(response.content).toEqual([{ type: 'text', text: 'Hello there, general Kenobi' }])
    expect(response.stopReason).toBe('end_turn')
    expect(response.model).toBe(testModel)
    expect(response.usage).toEqual({ inputTokens: 12, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 })
    expect(response.requestId).toMatch(/^req_fake_/)
    expect(deltas.length).toBeGreaterThan(1)
    expect(deltas.every(delta => delta.kind === 'text' && delta.index === 0)).toBe(true)
    expect(deltas.map(delta => delta.delta).join('')).toBe('Hello there, general Kenobi')
  })

  it('sends the request in wire form through the SDK', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ok' }] })
    await streamAll(fixture.provider({ maxTokens: 1234 }), userRequest('hi', { system: 'Be brief.', tools: [weatherTool] }))
    const request = fixture.server.requests[0]
    expect(request?.path).toBe('/v1/messages')
    expect(request?.headers['anthropic-version']).toBe('2026-10-21')
    expect(request?.headers.authorization).toBe(`Bearer ${testApiKey}`)
    expect(request?.body).toEqual({
      model: testModel, max_tokens: 1234, stream: true, system: 'Be brief.',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      tools: [{ name: 'get_weather', description: 'Weather for a city', input_schema: weatherTool.inputSchema }],
    })
  })

  it('never sends sampling parameters', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ok' }] })
    await streamAll(fixture.provider({ thinking: { type: 'enabled', budgetTokens: 2048 } }), userRequest('hi', { tools: [weatherTool], cache: true }))
    const body = fixture.server.requests[0]?.body ?? {}
    for (const name of ['temperature', 'top_p', 'top_k']) expect(body).not.toHaveProperty(name)
  })

  it('reassembles tool input from input_json_delta chunks', async () => {
    fixture.server.enqueue({ kind: 'message', content: [
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris', units: { kind: 'metric', digits: 1 } } },
    ] })
    const { response, deltas } = await streamAll(fixture.provider(), userRequest('weather?', { tools: [weatherTool] }))
    expect(response.stopReason).toBe('tool_use')
    expect(response.content[1]).toEqual({ type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris', units: { kind: 'metric', digits: 1 } } })
    const toolDeltas = deltas.filter(delta => delta.kind === 'tool_input')
    expect(toolDeltas.length).toBeGreaterThanOrEqual(3)
    expect(toolDeltas.every(delta => delta.index === 1)).toBe(true)
    expect(JSON.parse(toolDeltas.map(delta => delta.delta).join(''))).toEqual({ city: 'Paris', units: { kind: 'metric', digits: 1 } })
    expect(response.truncatedToolUse).toBeUndefined()
  })

  it('sends tool results back with camelCase fields converted', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'Sunny.' }] })
    await streamAll(fixture.provider(), {
      ...userRequest('weather?', { tools: [weatherTool] }),
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [
          { type: 'tool_result', toolUseId: 'toolu_01', content: [{ type: 'text', text: 'failed' }, { type: 'image', mediaType: 'image/png', data: 'iVBORw0=' }], isError: true },
          { type: 'tool_result', toolUseId: 'toolu_02', content: 'fine' },
        ] },
      ],
    })
    const messages = fixture.server.requests[0]?.body?.['messages']
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [
        { type: 'tool_result', tool_use_id: 'toolu_01', is_error: true, content: [{ type: 'text', text: 'failed' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0=' } }] },
        { type: 'tool_result', tool_use_id: 'toolu_02', content: 'fine' },
      ] },
    ])
  })

  it('keeps thinking with its signature and redacted thinking, and sends both back unchanged', async () => {
    fixture.server.enqueue(
      { kind: 'message', content: [
        { type: 'thinking', thinking: 'The user wants weather. I should call the tool.', signature: 'EqQBsig==' },
        { type: 'redacted_thinking', data: 'ENCRYPTED' },
        { type: 'tool_use', id: 'toolu_07', name: 'get_weather', input: { city: 'Oslo' } },
      ] },
      { kind: 'message', content: [{ type: 'text', text: 'Cold.' }] },
    )
    const provider = fixture.provider({ thinking: { type: 'enabled', budgetTokens: 2048 } })
    const first = await streamAll(provider, userRequest('weather in Oslo?', { tools: [weatherTool] }))
    expect(first.response.content).toEqual([
      { type: 'thinking', thinking: 'The user wants weather. I should call the tool.', signature: 'EqQBsig==' },
      { type: 'redacted_thinking', data: 'ENCRYPTED' },
      { type: 'tool_use', id: 'toolu_07', name: 'get_weather', input: { city: 'Oslo' } },
    ])
    expect(first.deltas.filter(delta => delta.kind === 'thinking').map(delta => delta.delta).join('')).toBe('The user wants weather. I should call the tool.')
    const second = userRequest('weather in Oslo?', { tools: [weatherTool] })
    second.messages.push({ role: 'assistant', content: first.response.content }, { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_07', content: '-3°C' }] })
    await streamAll(provider, second)
    const body = fixture.server.requests[1]?.body
    expect(body?.['thinking']).toEqual({ type: 'enabled', budget_tokens: 2048 })
    expect((body?.['messages'] as unknown[])[1]).toEqual({ role: 'assistant', content: [
      { type: 'thinking', thinking: 'The user wants weather. I should call the tool.', signature: 'EqQBsig==' },
      { type: 'redacted_thinking', data: 'ENCRYPTED' },
      { type: 'tool_use', id: 'toolu_07', name: 'get_weather', input: { city: 'Oslo' } },
    ] })
  })

  it('aborts the SDK call when the request signal fires', async () => {
    fixture.server.enqueue({ kind: 'stall', afterEvents: 4 })
    const controller = new AbortController()
    const pending = fixture.provider().stream(userRequest('hi', { signal: controller.signal }), () => controller.abort())
    const error = await rejectionOf(pending)
    expect(error).toMatchObject({ name: 'AgentAbortedError', code: 'run_aborted', retryable: false })
  })

  it('lets an error thrown by onDelta through unchanged', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'a b c' }] })
    const boom = new Error('listener failed')
    const error = await rejectionOf(fixture.provider().stream(userRequest('hi'), () => { throw boom }))
    expect(error).toBe(boom)
  })

  it('refuses to start without an API key', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', '')
    expect(() => anthropic({ baseURL: fixture.server.url })).toThrow(expect.objectContaining({ code: 'configuration_missing_api_key' }))
  })

  it('reads the key and base URL from the environment', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', testApiKey)
    vi.stubEnv('ANTHROPIC_BASE_URL', fixture.server.url)
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'from env' }] })
    const { response } = await streamAll(anthropic({ model: testModel }), userRequest('hi'))
    expect(response.content).toEqual([{ type: 'text', text: 'from env' }])
  })
})

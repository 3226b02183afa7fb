import Anthropic from '@anthropic-ai/sdk'
import { describe, expect, it } from 'vitest'
import { testApiKey, testModel, useFakeServer } from './fixture'

const minimalBody = { model: testModel, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }

function post(url: string, headers: Record<string, string>, body: object = minimalBody): Promise<Response> {
  return fetch(`${url}/v1/messages`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers }, body: JSON.stringify(body) })
}

function parseSse(text: string): { event: string; data: { type: string; [key: string]: unknown } }[] {
  return text.trim().split('\n\n').map(frame => {
    const [eventLine, dataLine, ...rest] = frame.split('\n')
    expect(rest).toEqual([])
    expect(eventLine).toMatch(/^event: /)
    expect(dataLine).toMatch(/^data: /)
    return { event: eventLine!.slice('event: '.length), data: JSON.parse(dataLine!.slice('data: '.length)) as { type: string } }
  })
}

describe('fake Anthropic server', () => {
  const fixture = useFakeServer()

  it('accepts the key in x-api-key and in Authorization: Bearer', async () => {
    fixture.server.setHandler(() => ({ kind: 'message', content: [{ type: 'text', text: 'ok' }] }))
    expect((await post(fixture.server.url, { 'x-api-key': testApiKey })).status).toBe(200)
    expect((await post(fixture.server.url, { authorization: `Bearer ${testApiKey}` })).status).toBe(200)
    expect(fixture.server.requests.map(request => request.authStyle)).toEqual(['x-api-key', 'bearer'])
  })

  it('rejects a missing or wrong key with a 401 error body and a request-id header', async () => {
    for (const headers of [{}, { 'x-api-key': 'nope' }, { authorization: 'Bearer nope' }]) {
      const response = await post(fixture.server.url, headers)
      const requestId = response.headers.get('request-id')
      expect(response.status).toBe(401)
      expect(requestId).toMatch(/^req_fake_/)
      expect(await response.json()).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' }, request_id: requestId })
    }
  })

  it('answers non-streaming requests with a full Message through the SDK', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'Hi' }, { type: 'tool_use', id: 'toolu_9', name: 'f', input: { a: 1 } }] })
    const client = new Anthropic({ apiKey: testApiKey, baseURL: fixture.server.url, maxRetries: 0 })
    const message = await client.messages.create({ model: testModel, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })
    expect(message).toMatchObject({
      type: 'message', role: 'assistant', model: testModel, stop_reason: 'tool_use', stop_sequence: null,
      content: [{ type: 'text', text: 'Hi', citations: null }, { type: 'tool_use', id: 'toolu_9', name: 'f', input: { a: 1 } }],
      usage: { cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 }, service_tier: 'standard' },
    })
    expect(message._request_id).toMatch(/^req_fake_/)
  })

  it('frames SSE events the way the API does', async () => {
    fixture.server.enqueue({ kind: 'message', content: [
      { type: 'thinking', thinking: 'hmm let me see', signature: 'sig' },
      { type: 'text', text: 'Hello world' },
      { type: 'tool_use', name: 'f', input: { city: 'Paris', days: 3 } },
    ] })
    const response = await post(fixture.server.url, { 'x-api-key': testApiKey }, { ...minimalBody, stream: true })
    expect(response.headers.get('content-type')).toBe('text/event-stream')
    const events = parseSse(await response.text())
    for (const { event, data } of events) expect(data.type).toBe(event)
    expect(events[0]?.event).toBe('message_start')
    expect(events[0]?.data['message']).toMatchObject({ content: [], stop_reason: null, usage: { output_tokens: 1 } })
    expect(events.at(-1)?.event).toBe('message_stop')
    expect(events.at(-2)?.data).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'tool_use' } })
    const deltaTypes = events.filter(({ event }) => event === 'content_block_delta').map(({ data }) => (data['delta'] as { type: string }).type)
    expect(deltaTypes.filter(type => type === 'input_json_delta').length).toBeGreaterThanOrEqual(3)
    expect(deltaTypes).toContain('signature_delta')
    expect(events.some(({ event }) => event === 'ping')).toBe(true)
  })

  it('rejects sampling parameters and more than four breakpoints like API version 2026-10-21', async () => {
    const sampling = await post(fixture.server.url, { 'x-api-key': testApiKey }, { ...minimalBody, temperature: 0.5 })
    expect(sampling.status).toBe(400)
    expect(await sampling.json()).toMatchObject({ error: { type: 'invalid_request_error', message: 'temperature: Extra inputs are not permitted' } })
    const block = { type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }
    const tooMany = await post(fixture.server.url, { 'x-api-key': testApiKey }, { ...minimalBody, messages: [{ role: 'user', content: [block, block, block, block, block] }] })
    expect(tooMany.status).toBe(400)
  })

  it('sends retry headers with scripted errors and records the retry count', async () => {
    fixture.server.enqueue({ kind: 'error', status: 429, retryAfterMs: 1, retryAfterSeconds: 1 })
    const response = await post(fixture.server.url, { 'x-api-key': testApiKey, 'x-stainless-retry-count': '3' })
    expect(response.status).toBe(429)
    expect(response.headers.get('retry-after-ms')).toBe('1')
    expect(response.headers.get('retry-after')).toBe('1')
    expect(fixture.server.requests[0]?.retryCount).toBe(3)
  })

  it('answers with a function of the request when the queue is empty', async () => {
    fixture.server.setHandler(request => ({ kind: 'message', content: [{ type: 'text', text: `you sent ${(request.body?.['messages'] as unknown[]).length}` }] }))
    const response = await post(fixture.server.url, { 'x-api-key': testApiKey })
    expect(await response.json()).toMatchObject({ content: [{ type: 'text', text: 'you sent 1' }] })
  })

  it('counts tokens and answers 404 elsewhere', async () => {
    const count = await fetch(`${fixture.server.url}/v1/messages/count_tokens`, { method: 'POST', headers: { 'x-api-key': testApiKey, 'anthropic-version': '2026-10-21' }, body: JSON.stringify({ model: testModel, messages: [] }) })
    expect(await count.json()).toEqual({ input_tokens: expect.any(Number) })
    const missing = await fetch(`${fixture.server.url}/v1/models`, { method: 'POST', headers: { 'x-api-key': testApiKey } })
    expect(missing.status).toBe(404)
  })
})

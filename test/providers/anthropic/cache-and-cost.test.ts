import { describe, expect, it } from 'vitest'
import type { Json } from '../../../support/anthropic-server'
import type { Message, ModelRequest, ToolSpec } from '../../../src/providers'
import { computeCostUsd, defaultPrices, maxCacheBreakpoints } from '../../../src/providers/anthropic'
import { streamAll, testModel, useFakeServer, userRequest } from './fixture'

const tools: ToolSpec[] = [
  { name: 'read', description: 'Read a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
  { name: 'write', description: 'Write a file', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
]

function cachedPaths(body: { [key: string]: Json } | undefined): string[] {
  const paths: string[] = []
  const visit = (value: Json | undefined, path: string): void => {
    if (value === null || typeof value !== 'object' || value === undefined) return
    if (!Array.isArray(value) && value['cache_control'] !== undefined) paths.push(path)
    for (const [key, child] of Object.entries(value)) visit(child, `${path}.${key}`)
  }
  visit(body, '$')
  return paths
}

function conversation(): ModelRequest {
  const messages: Message[] = [
    { role: 'user', content: [{ type: 'text', text: 'Read a.txt and b.txt. '.repeat(20) }] },
    { role: 'assistant', content: [{ type: 'thinking', thinking: 'ok', signature: 'sig' }, { type: 'tool_use', id: 'toolu_1', name: 'read', input: { path: 'a.txt' } }] },
    { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_1', content: 'contents of a' }] },
  ]
  return { ...userRequest(''), messages, tools, system: 'You are a careful assistant. '.repeat(20), cache: true }
}

describe('anthropic provider: prompt caching', () => {
  const fixture = useFakeServer()

  it('places breakpoints on the last tool, the system prompt and the last block of the last message', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ok' }] })
    await streamAll(fixture.provider(), conversation())
    const body = fixture.server.requests[0]?.body
    const paths = cachedPaths(body)
    expect(paths.sort()).toEqual(['$.messages.2.content.0', '$.system.0', '$.tools.1'])
    expect(paths.length).toBeLessThanOrEqual(maxCacheBreakpoints)
    expect((body?.['system'] as Json[])[0]).toEqual({ type: 'text', text: conversation().system, cache_control: { type: 'ephemeral' } })
  })

  it('walks back past blocks that cannot carry a breakpoint', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ok' }] })
    const request = { ...userRequest('question'), cache: true }
    request.messages.push({ role: 'assistant', content: [{ type: 'redacted_thinking', data: 'xyz' }] })
    await streamAll(fixture.provider(), request)
    expect(cachedPaths(fixture.server.requests[0]?.body)).toEqual(['$.messages.0.content.0'])
  })

  it('places no breakpoint without cache: true', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ok' }] })
    await streamAll(fixture.provider(), { ...conversation(), cache: false })
    expect(cachedPaths(fixture.server.requests[0]?.body)).toEqual([])
  })

  it('accounts cache writes, then cache reads, and prices them', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'first' }], usage: { output_tokens: 10 } })
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'second' }], usage: { output_tokens: 10 } })
    const provider = fixture.provider()
    const first = (await streamAll(provider, conversation())).response
    const second = conversation()
    second.messages.push({ role: 'assistant', content: [{ type: 'text', text: 'first' }] }, { role: 'user', content: [{ type: 'text', text: 'and b?' }] })
    const next = (await streamAll(provider, second)).response
    expect(first.usage.cacheWriteTokens).toBeGreaterThan(100)
    expect(first.usage.cacheReadTokens).toBe(0)
    expect(first.usage.cacheWrite5mTokens).toBe(first.usage.cacheWriteTokens)
    expect(next.usage.cacheReadTokens).toBe(first.usage.cacheWriteTokens)
    expect(next.usage.cacheWriteTokens).toBeGreaterThan(0)
    const { inputTokens, cacheWriteTokens } = first.usage
    expect(first.costUsd).toBeCloseTo((inputTokens * 1 + cacheWriteTokens * 2 + 10 * 10) / 1e6, 12)
    expect(next.costUsd).toBeCloseTo((next.usage.inputTokens * 1 + next.usage.cacheWriteTokens * 2 + next.usage.cacheReadTokens * 0.5 + 10 * 10) / 1e6, 12)
  })

  it('keeps the 5m/1h write split and prices each lifetime', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ok' }], usage: {
      input_tokens: 100, output_tokens: 50, cache_creation_input_tokens: 3000, cache_read_input_tokens: 4000,
      cache_creation: { ephemeral_5m_input_tokens: 1000, ephemeral_1h_input_tokens: 2000 },
    } })
    const { response } = await streamAll(fixture.provider(), userRequest('hi'))
    expect(response.usage).toEqual({ inputTokens: 100, outputTokens: 50, cacheWriteTokens: 3000, cacheReadTokens: 4000, cacheWrite5mTokens: 1000, cacheWrite1hTokens: 2000 })
    expect(response.costUsd).toBeCloseTo((100 * 1 + 50 * 10 + 1000 * 2 + 2000 * 4 + 4000 * 0.5) / 1e6, 12)
  })

  it('prices writes as 5-minute ones when the API sends no split', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ok' }], usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 1000, cache_creation: null } })
    const { response } = await streamAll(fixture.provider(), userRequest('hi'))
    expect(response.usage).toEqual({ inputTokens: 0, outputTokens: 0, cacheWriteTokens: 1000, cacheReadTokens: 0 })
    expect(response.costUsd).toBeCloseTo(1000 * 2 / 1e6, 12)
  })
})

describe('anthropic provider: cost', () => {
  const fixture = useFakeServer()
  const usage = { input_tokens: 1_000_000, output_tokens: 1_000_000, cache_creation_input_tokens: 1_000_000, cache_read_input_tokens: 1_000_000, cache_creation: { ephemeral_5m_input_tokens: 500_000, ephemeral_1h_input_tokens: 500_000 } }

  it.each([
    ['claude-sonnet-4-6', 3 + 15 + 3.75 / 2 + 6 / 2 + 0.3],
    ['claude-opus-4-1', 15 + 75 + 18.75 / 2 + 30 / 2 + 1.5],
    ['claude-haiku-4-5', 1 + 5 + 1.25 / 2 + 2 / 2 + 0.1],
  ])('prices %s from the table', async (model, expectedUsd) => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ok' }], usage })
    const { response } = await streamAll(fixture.provider({ model }), userRequest('hi'))
    expect(response.model).toBe(model)
    expect(response.costUsd).toBeCloseTo(expectedUsd, 9)
  })

  it('costs 0 for a model missing from the table', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ok' }], usage })
    const { response } = await streamAll(fixture.provider({ model: 'claude-unknown-9', prices: {} }), userRequest('hi'))
    expect(response.costUsd).toBe(0)
  })

  it('lets options.prices override the table', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ok' }], usage: { input_tokens: 1_000_000, output_tokens: 0 } })
    const prices = { 'claude-haiku-4-5': { inputPerMTok: 7, outputPerMTok: 0, cacheWrite5mPerMTok: 0, cacheWrite1hPerMTok: 0, cacheReadPerMTok: 0 } }
    const { response } = await streamAll(fixture.provider({ model: 'claude-haiku-4-5', prices }), userRequest('hi'))
    expect(response.costUsd).toBeCloseTo(7, 9)
  })
})

describe('computeCostUsd', () => {
  it('uses the published-style table by default and falls back from dated snapshot ids', () => {
    const usage = { inputTokens: 2_000_000, outputTokens: 1_000_000, cacheReadTokens: 0, cacheWriteTokens: 0 }
    expect(computeCostUsd(usage, 'claude-sonnet-4-5')).toBeCloseTo(2 * 3 + 15, 9)
    expect(computeCostUsd(usage, 'claude-sonnet-4-5-20250929')).toBeCloseTo(2 * 3 + 15, 9)
    expect(computeCostUsd(usage, 'gpt-unknown')).toBe(0)
    expect(defaultPrices['claude-opus-4-1']).toEqual({ inputPerMTok: 15, outputPerMTok: 75, cacheWrite5mPerMTok: 18.75, cacheWrite1hPerMTok: 30, cacheReadPerMTok: 1.5 })
    expect(computeCostUsd(usage, testModel, {})).toBe(0)
  })
})

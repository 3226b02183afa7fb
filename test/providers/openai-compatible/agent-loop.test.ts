import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { openaiCompatible } from '../../../src/providers'
import { startOpenAiServer } from '../../../support/openai-server'
import type { FakeOpenAiServer } from '../../../support/openai-server'

const lookup: ToolDef = {
  spec: { name: 'lookup', description: 'Look a record up', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
  replay: 'safe',
  execute: async input => `record ${String(input.id)}: ok`,
}

describe('the OpenAI-compatible provider in the agent loop', () => {
  let server: FakeOpenAiServer
  beforeEach(async () => { server = await startOpenAiServer({ apiKey: 'sk-loop' }) })
  afterEach(() => server.close())
  const provider = () => openaiCompatible({ apiKey: 'sk-loop', baseURL: server.baseURL, model: 'gpt-loop', maxRetries: 0, prices: { 'gpt-loop': { inputPerMTok: 1, outputPerMTok: 10 } } })

  it('runs a tool round trip with valid requests, and retries a cut stream within one model step', async () => {
    server.enqueue(
      { kind: 'chat', toolCalls: [{ name: 'lookup', arguments: { id: '42' } }], usage: { prompt_tokens: 100, completion_tokens: 20 } },
      { kind: 'cut', afterChunks: 2 },
      { kind: 'chat', text: 'Record 42 is ok.', usage: { prompt_tokens: 150, completion_tokens: 10 } },
    )
    const stats = await createAgent({ provider: provider(), tools: [lookup], behavior: { modelRetryDelayMs: 1 } }).run({ prompt: 'Check record 42' })
    expect(stats).toMatchObject({ status: 'completed', text: 'Record 42 is ok.', modelRequests: 2, usage: { inputTokens: 250, outputTokens: 30 } })
    expect(stats.costUsd).toBeCloseTo((250 + 300) / 1e6, 12)
    expect(server.requests.map(request => request.problems)).toEqual([[], [], []])
    expect((server.requests[2]?.body?.['messages'] as Array<{ role: string }>).map(message => message.role)).toEqual(['user', 'assistant', 'tool'])
  })

  it('stops before the request that would exceed maxCostUsd', async () => {
    server.setHandler(() => ({ kind: 'chat', toolCalls: [{ name: 'lookup', arguments: { id: 'x' } }], usage: { prompt_tokens: 100_000, completion_tokens: 0 } }))
    const stats = await createAgent({ provider: provider(), tools: [lookup], behavior: { maxCostUsd: 0.25 } }).run({ prompt: 'spend' })
    expect(stats.status).toBe('limit')
    expect(server.requests).toHaveLength(2)
    expect(stats.costUsd).toBeCloseTo(0.2, 9)
    expect(stats.reason).toContain('maxCostUsd')
  })
})

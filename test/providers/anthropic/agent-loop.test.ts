import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { createMemoryJournal, createMemoryJournalRuntime, SimulatedCrashError } from 'zidane/testing'
import { testModel, useFakeServer } from './fixture'

const lookup: ToolDef = {
  spec: { name: 'lookup', description: 'Look a record up', inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
  replay: 'safe',
  execute: async input => `record ${String(input.id)}: ok`,
}

function sumServerUsage(bodies: Array<{ input: number; output: number }>): { input: number; output: number } {
  return bodies.reduce((sum, usage) => ({ input: sum.input + usage.input, output: sum.output + usage.output }), { input: 0, output: 0 })
}

describe('the Anthropic provider in the agent loop', () => {
  const fixture = useFakeServer()

  it('runs a tool-use round trip and keeps thinking blocks across turns', async () => {
    fixture.server.enqueue(
      { kind: 'message', content: [{ type: 'thinking', thinking: 'I should look it up', signature: 'sig-1' }, { type: 'tool_use', name: 'lookup', input: { id: '42' } }], usage: { input_tokens: 100, output_tokens: 20 } },
      { kind: 'message', content: [{ type: 'text', text: 'Record 42 is ok.' }], usage: { input_tokens: 150, output_tokens: 10 } },
    )
    const agent = createAgent({ provider: fixture.provider(), tools: [lookup] })
    const stats = await agent.run({ prompt: 'Check record 42' })
    expect(stats.status).toBe('completed')
    expect(stats.text).toBe('Record 42 is ok.')
    const second = fixture.server.requests[1]?.body as { messages: Array<{ role: string; content: Array<{ type: string; signature?: string; content?: unknown }> }> }
    expect(second.messages[1]?.content[0]).toMatchObject({ type: 'thinking', signature: 'sig-1' })
    expect(second.messages[2]?.content[0]).toMatchObject({ type: 'tool_result', content: 'record 42: ok' })
    expect(stats.usage).toMatchObject({ inputTokens: 250, outputTokens: 30 })
    expect(stats.costUsd).toBeCloseTo((250 * 1 + 30 * 10) / 1e6, 9)
  })

  it('retries a mid-stream overloaded error with the loop policy, within one journaled model step', async () => {
    fixture.server.enqueue(
      { kind: 'overloaded', midStream: true, afterEvents: 2 },
      { kind: 'message', content: [{ type: 'text', text: 'fine now' }], usage: { input_tokens: 10, output_tokens: 2 } },
    )
    const agent = createAgent({ provider: fixture.provider(), behavior: { modelRetryDelayMs: 1 } })
    const stats = await agent.run({ prompt: 'hi' })
    expect(stats.text).toBe('fine now')
    expect(fixture.server.requests).toHaveLength(2)
    expect(stats.modelRequests).toBe(1)
  })

  it('aborts a stalled stream with the idle watchdog and retries it, a bounded number of times', async () => {
    fixture.server.enqueue(
      { kind: 'stall', afterEvents: 2 },
      { kind: 'message', content: [{ type: 'text', text: 'after the stall' }], usage: { input_tokens: 10, output_tokens: 3 } },
    )
    const stats = await createAgent({ provider: fixture.provider({ idleTimeoutMs: 150 }), behavior: { modelRetryDelayMs: 1 } }).run({ prompt: 'hi' })
    expect(stats.text).toBe('after the stall')
    expect(fixture.server.requests).toHaveLength(2)

    fixture.server.setHandler(() => ({ kind: 'stall', afterEvents: 1 }))
    const gaveUp = await createAgent({ provider: fixture.provider({ idleTimeoutMs: 100 }), behavior: { modelRetries: 2, modelRetryDelayMs: 1 } }).run({ prompt: 'again' })
    expect(gaveUp.status).toBe('error')
    expect(gaveUp.reason).toContain('provider_stream_idle')
    expect(fixture.server.requests).toHaveLength(2 + 3)
  })

  it('ends the run with a clear message on 401 and does not retry', async () => {
    fixture.server.enqueue({ kind: 'error', status: 401, message: 'invalid x-api-key' })
    const stats = await createAgent({ provider: fixture.provider(), behavior: { modelRetryDelayMs: 1 } }).run({ prompt: 'hi' })
    expect(stats.status).toBe('error')
    expect(stats.reason).toContain('provider_unauthorized')
    expect(fixture.server.requests).toHaveLength(1)
  })

  it('does not bill a finished model step again after a crash, and the ledger equals the server usage', async () => {
    const journal = createMemoryJournal()
    fixture.server.enqueue(
      { kind: 'message', content: [{ type: 'tool_use', name: 'lookup', input: { id: '1' } }], usage: { input_tokens: 300, output_tokens: 40 } },
      { kind: 'message', content: [{ type: 'text', text: 'done' }], usage: { input_tokens: 420, output_tokens: 12 } },
    )
    const first = createAgent({ provider: fixture.provider(), tools: [lookup], durable: createMemoryJournalRuntime({ journal, crashAt: { step: '/t2/model', when: 'before' } }), sessionId: 'billing' })
    await expect(first.run({ prompt: 'go' })).rejects.toBeInstanceOf(SimulatedCrashError)
    expect(fixture.server.requests).toHaveLength(1)
    const second = createAgent({ provider: fixture.provider(), tools: [lookup], durable: createMemoryJournalRuntime({ journal }), sessionId: 'billing' })
    const stats = await second.resume()
    expect(fixture.server.requests).toHaveLength(2)
    const served = sumServerUsage([{ input: 300, output: 40 }, { input: 420, output: 12 }])
    expect(stats?.usage.inputTokens).toBe(served.input)
    expect(stats?.usage.outputTokens).toBe(served.output)
    expect(stats?.costUsd).toBeCloseTo((served.input * 1 + served.output * 10) / 1e6, 9)
  })

  it('stops before the request that would exceed maxCostUsd', async () => {
    fixture.server.setHandler(() => ({ kind: 'message', content: [{ type: 'tool_use', name: 'lookup', input: { id: 'x' } }], usage: { input_tokens: 100_000, output_tokens: 0 } }))
    const agent = createAgent({ provider: fixture.provider(), tools: [lookup], behavior: { maxCostUsd: 0.25 } })
    const stats = await agent.run({ prompt: 'spend' })
    expect(stats.status).toBe('limit')
    expect(fixture.server.requests).toHaveLength(2)
    expect(stats.costUsd).toBeCloseTo(0.2, 9)
    expect(stats.reason).toContain('maxCostUsd')
  })

  it('sends the model id and never a sampling parameter', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'ok' }] })
    await createAgent({ provider: fixture.provider() }).run({ prompt: 'hi' })
    const body = fixture.server.requests[0]?.body ?? {}
    expect(body.model).toBe(testModel)
    expect(Object.keys(body)).not.toContain('temperature')
    expect(Object.keys(body)).not.toContain('top_p')
  })
})

import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { scriptedProvider } from 'zidane/testing'

const strict: ToolDef = {
  spec: { name: 'strict', description: 'Needs a number', inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'], additionalProperties: false } },
  execute: async input => `n=${String(input.n)}`,
}
const broken: ToolDef = {
  spec: { name: 'broken', description: 'Always throws', inputSchema: { type: 'object' } },
  execute: async () => { throw new Error('disk on fire') },
}

function lastResults(provider: ReturnType<typeof scriptedProvider>): unknown[] {
  return provider.requests.at(-1)?.messages.at(-1)?.content ?? []
}

describe('tool failures', () => {
  it('turns invalid input into an error result and goes on', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'strict', input: { n: 'seven' } }] }, { text: 'recovered' }])
    const stats = await createAgent({ provider, tools: [strict] }).run({ prompt: 'go' })
    expect(stats.status).toBe('completed')
    expect(lastResults(provider)[0]).toMatchObject({ type: 'tool_result', isError: true, content: expect.stringContaining('Invalid input for tool strict') })
  })

  it('turns a thrown error into an error result and goes on', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'broken', input: {} }] }, { text: 'recovered' }])
    const stats = await createAgent({ provider, tools: [broken] }).run({ prompt: 'go' })
    expect(stats.status).toBe('completed')
    expect(lastResults(provider)[0]).toMatchObject({ isError: true, content: 'Tool broken failed: disk on fire' })
  })

  it('answers an unknown tool with an error result', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'nope', input: {} }] }, { text: 'ok' }])
    await createAgent({ provider, tools: [strict] }).run({ prompt: 'go' })
    expect(lastResults(provider)[0]).toMatchObject({ isError: true, content: expect.stringContaining('Unknown tool: nope') })
  })

  it('consults deny rules when the call runs', async () => {
    let ran = false
    const guarded: ToolDef = { ...strict, execute: async () => { ran = true; return 'ran' } }
    const provider = scriptedProvider([{ toolCalls: [{ name: 'strict', input: { n: 1 } }] }, { text: 'ok' }])
    const agent = createAgent({ provider, tools: [guarded], canUseTool: call => (call.name === 'strict' ? { deny: 'not on Fridays' } : 'allow') })
    await agent.run({ prompt: 'go' })
    expect(ran).toBe(false)
    expect(lastResults(provider)[0]).toMatchObject({ isError: true, content: 'Permission denied for strict: not on Fridays' })
  })

  it('asks for approval through an awakeable and runs the call once approved', async () => {
    let ran = 0
    const guarded: ToolDef = { ...strict, execute: async () => { ran++; return 'ran' } }
    const provider = scriptedProvider([{ toolCalls: [{ name: 'strict', input: { n: 1 } }] }, { text: 'ok' }])
    const agent = createAgent({
      provider,
      tools: [guarded],
      canUseTool: () => 'ask',
      requestInteraction: request => { void agent.runtime.resolveAwakeable(request.awakeable.id, 'yes') },
    })
    await agent.run({ prompt: 'go' })
    expect(ran).toBe(1)
  })

  it('ends the run with a clear error when the provider fails for good', async () => {
    const failure = Object.assign(new Error('bad key'), { code: 'provider_unauthorized', category: 'provider', retryable: false })
    const provider = scriptedProvider([{ error: failure }])
    const stats = await createAgent({ provider }).run({ prompt: 'go' })
    expect(stats.status).toBe('error')
    expect(stats.reason).toContain('bad key')
  })

  it('retries a retryable provider failure within the model step', async () => {
    const overloaded = Object.assign(new Error('overloaded'), { code: 'provider_overloaded', category: 'provider', retryable: true })
    const provider = scriptedProvider([{ error: overloaded }, { text: 'second time lucky' }])
    const stats = await createAgent({ provider, behavior: { modelRetryDelayMs: 1 } }).run({ prompt: 'go' })
    expect(stats.status).toBe('completed')
    expect(provider.requests).toHaveLength(2)
  })
})

describe('tools that journal themselves', () => {
  it('may resolve to bare text, which becomes the tool result', async () => {
    const selfJournaled: ToolDef = { spec: { name: 'job', description: 'Job', inputSchema: { type: 'object' } }, journal: 'self', execute: async () => 'job finished' }
    const provider = scriptedProvider([{ toolCalls: [{ name: 'job', input: {} }] }, { text: 'ok' }])
    await createAgent({ provider, tools: [selfJournaled] }).run({ prompt: 'go' })
    expect(provider.requests[1]?.messages.at(-1)?.content[0]).toMatchObject({ type: 'tool_result', content: 'job finished' })
  })
})

describe('tool events', () => {
  it('reach the agent hooks through ctx.emit, with the call they came from', async () => {
    const chatty: ToolDef = { spec: { name: 'chatty', description: 'Chatty', inputSchema: { type: 'object' } }, execute: async (_input, ctx) => { await ctx.emit('progress', { percent: 50 }); return 'done' } }
    const seen: unknown[] = []
    const agent = createAgent({ provider: scriptedProvider([{ toolCalls: [{ name: 'chatty', input: {} }] }, { text: 'ok' }]), tools: [chatty] })
    agent.hooks.hook('tool:event', event => { seen.push({ name: event.name, toolName: event.toolName, payload: event.payload }) })
    await agent.run({ prompt: 'go' })
    expect(seen).toEqual([{ name: 'progress', toolName: 'chatty', payload: { percent: 50 } }])
  })
})

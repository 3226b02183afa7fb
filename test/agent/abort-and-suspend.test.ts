import { describe, expect, it } from 'vitest'
import { createAgent, INTERRUPTED_TOOL_TEXT } from 'zidane'
import type { ToolDef } from 'zidane'
import { createMemoryJournal, createMemoryJournalRuntime, scriptedProvider } from 'zidane/testing'

/** Resolves once `condition` holds (checked every turn of the event loop): waits on state, not on time. */
async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise(resolve => setImmediate(resolve))
}

function slowTool(name: string, delayMs: number, log: string[], safe = false): ToolDef {
  return {
    spec: { name, description: name, inputSchema: { type: 'object' } },
    ...(safe ? { replay: 'safe' as const } : {}),
    execute: (_input, ctx) => new Promise((resolve, reject) => {
      log.push(`${name}:start`)
      const timer = setTimeout(() => { log.push(`${name}:end`); resolve(`${name} finished`) }, delayMs)
      ctx.signal.addEventListener('abort', () => { clearTimeout(timer); log.push(`${name}:aborted`); reject(new Error('aborted')) }, { once: true })
    }),
  }
}

describe('abort and suspend', () => {
  it('abort() ends the run for good with status aborted', async () => {
    const log: string[] = []
    const provider = scriptedProvider(() => ({ toolCalls: [{ name: 'slow', input: {} }] }))
    const agent = createAgent({ provider, tools: [slowTool('slow', 5_000, log)] })
    const running = agent.run({ prompt: 'go' })
    await until(() => log.includes('slow:start'))
    agent.abort()
    const stats = await running
    expect(stats.status).toBe('aborted')
    expect(log).toEqual(['slow:start', 'slow:aborted'])
    const session = await agent.session()
    const results = session.turns.at(-1)?.content
    expect(results?.[0]).toMatchObject({ type: 'tool_result', isError: true })
  })

  it('abort() stops a model request in flight', async () => {
    const provider = scriptedProvider([{ text: 'late', delayMs: 5_000 }])
    const agent = createAgent({ provider })
    const running = agent.run({ prompt: 'go' })
    await until(() => provider.requests.length > 0)
    agent.abort()
    const stats = await running
    expect(stats.status).toBe('aborted')
  })

  it('suspend() stops the model at once and resolves suspended', async () => {
    const provider = scriptedProvider([{ text: 'late', delayMs: 5_000 }])
    const agent = createAgent({ provider })
    const running = agent.run({ prompt: 'go' })
    await until(() => provider.requests.length > 0)
    await agent.suspend({ graceMs: 1_000 })
    const stats = await running
    expect(stats.status).toBe('suspended')
    expect(stats.suspended).toBe(true)
  })

  it('suspend() lets running tools finish within graceMs and starts no new call', async () => {
    const log: string[] = []
    const provider = scriptedProvider([{ toolCalls: [{ name: 'quick', input: {} }, { name: 'next', input: {} }] }, { text: 'never' }])
    const agent = createAgent({ provider, tools: [slowTool('quick', 80, log), slowTool('next', 10, log)] })
    const running = agent.run({ prompt: 'go' })
    await until(() => log.includes('quick:start'))
    await agent.suspend({ graceMs: 1_000 })
    const stats = await running
    expect(stats.status).toBe('suspended')
    expect(log).toEqual(['quick:start', 'quick:end'])
  })

  it('a suspended durable run resumes in the next process from its checkpoint', async () => {
    const journal = createMemoryJournal()
    const log: string[] = []
    const provider = scriptedProvider([{ toolCalls: [{ name: 'quick', input: {} }, { name: 'next', input: {} }] }, { text: 'all done' }])
    const tools = [slowTool('quick', 80, log), slowTool('next', 10, log)]
    const first = createAgent({ provider, tools, durable: createMemoryJournalRuntime({ journal }), sessionId: 's-suspend' })
    const running = first.run({ prompt: 'go' })
    await until(() => log.includes('quick:start'))
    await first.suspend({ graceMs: 1_000 })
    expect((await running).status).toBe('suspended')
    const second = createAgent({ provider, tools, durable: createMemoryJournalRuntime({ journal }), sessionId: 's-suspend' })
    const resumed = await second.resume()
    expect(resumed?.status).toBe('completed')
    expect(resumed?.text).toBe('all done')
    expect(log).toEqual(['quick:start', 'quick:end', 'next:start', 'next:end'])
    expect(provider.requests).toHaveLength(2)
    const results = provider.requests[1]?.messages.at(-1)?.content
    expect(results?.map(block => (block.type === 'tool_result' ? block.content : ''))).toEqual(['quick finished', 'next finished'])
    expect(JSON.stringify(results)).not.toContain(INTERRUPTED_TOOL_TEXT)
  })
})

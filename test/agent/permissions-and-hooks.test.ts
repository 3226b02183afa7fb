import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { createMemoryJournal, createMemoryJournalRuntime, scriptedProvider, SimulatedCrashError } from 'zidane/testing'
import { countingTool } from '../helpers/tools'

/** A tool that journals itself (like spawn or ask_user): the loop does not wrap it in a step. */
function selfJournaledTool(name: string, ledger: string[]): ToolDef {
  return { ...countingTool(name, ledger), journal: 'self' }
}

describe('permission decisions', () => {
  it('journals canUseTool: after a crash the recorded decision stands and the policy is not asked again', async () => {
    const journal = createMemoryJournal()
    const ledger: string[] = []
    const provider = scriptedProvider([{ toolCalls: [{ name: 'deploy', input: {} }] }, { text: 'done' }])
    const firstRuntime = createMemoryJournalRuntime({ journal })
    // The call's process dies inside the call: the next process resumes the run after the recorded decisions.
    const dying: ToolDef = { ...countingTool('deploy', ledger), execute: async () => { ledger.push('deploy'); firstRuntime.crash(); return 'done' } }
    const first = createAgent({
      provider, tools: [dying], canUseTool: () => 'ask', sessionId: 's1',
      requestInteraction: async request => { await firstRuntime.resolveAwakeable(request.awakeable.id, 'approve') },
      durable: { runtime: firstRuntime, onInterrupted: 'resume' },
    })
    await expect(first.run({ prompt: 'go' })).rejects.toBeInstanceOf(SimulatedCrashError)
    let asked = 0
    const second = createAgent({ provider, tools: [countingTool('deploy', ledger)], canUseTool: () => { asked++; return { deny: 'a different answer' } }, durable: { runtime: createMemoryJournalRuntime({ journal }), onInterrupted: 'resume' }, sessionId: 's1' })
    const stats = await second.resume()
    expect(stats?.status).toBe('completed')
    expect(ledger).toEqual(['deploy'])
    // The approval path recorded before the crash is replayed as it was: no new decision, no second approval.
    expect(asked).toBe(0)
  })

  it('applies deny rules to tools that journal themselves', async () => {
    const ledger: string[] = []
    const provider = scriptedProvider([{ toolCalls: [{ name: 'spawn_like', input: {} }] }, { text: 'done' }])
    const agent = createAgent({ provider, tools: [selfJournaledTool('spawn_like', ledger)], canUseTool: () => ({ deny: 'not here' }) })
    const stats = await agent.run({ prompt: 'go' })
    expect(stats.status).toBe('completed')
    expect(ledger).toEqual([])
    const lastRequest = provider.requests.at(-1)?.messages.at(-1)?.content[0]
    expect(lastRequest).toMatchObject({ type: 'tool_result', isError: true, content: 'Permission denied for spawn_like: not here' })
  })
})

describe('hooks that throw', () => {
  it('a throwing model:delta hook fails the run with a clear reason instead of ending the process', async () => {
    const rejections: unknown[] = []
    const onRejection = (reason: unknown): void => { rejections.push(reason) }
    process.on('unhandledRejection', onRejection)
    try {
      const agent = createAgent({ provider: scriptedProvider([{ text: 'hello' }]), hooks: { 'model:delta': () => { throw new Error('viewer went away') } } })
      const stats = await agent.run({ prompt: 'hi' })
      expect(stats.status).toBe('error')
      expect(stats.reason).toBe('hook model:delta failed: viewer went away')
      await new Promise(resolve => setImmediate(resolve))
      expect(rejections).toEqual([])
    } finally {
      process.off('unhandledRejection', onRejection)
    }
  })

  it('a rejecting model:delta hook stops the run at the next turn boundary', async () => {
    const ledger: string[] = []
    const provider = scriptedProvider([{ text: 'calling', toolCalls: [{ name: 'work', input: {} }] }, { text: 'never' }])
    const agent = createAgent({ provider, tools: [countingTool('work', ledger)], hooks: { 'model:delta': async () => { throw new Error('async failure') } } })
    const stats = await agent.run({ prompt: 'hi' })
    expect(stats.status).toBe('error')
    expect(provider.requests).toHaveLength(1)
  })
})

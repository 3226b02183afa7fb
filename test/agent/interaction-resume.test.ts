import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { InteractionRequest } from 'zidane'
import { createMemoryJournal, createMemoryJournalRuntime, scriptedProvider, SimulatedCrashError } from 'zidane/testing'
import { countingTool } from '../helpers/tools'

const flushMicrotasks = (): Promise<void> => new Promise(resolve => setImmediate(resolve))

describe('an approval waiting at a crash', () => {
  it('is announced again by the resuming process, once, with the same awakeable id and resumed: true', async () => {
    const journal = createMemoryJournal()
    const ledger: string[] = []
    const provider = scriptedProvider([{ toolCalls: [{ name: 'deploy', input: {} }] }, { text: 'done' }])
    const firstRuntime = createMemoryJournalRuntime({ journal })
    const firstRequests: InteractionRequest[] = []
    const firstHooks: InteractionRequest[] = []
    let asked: () => void = () => undefined
    const wasAsked = new Promise<void>(resolve => { asked = resolve })
    const first = createAgent({
      provider, tools: [countingTool('deploy', ledger)], canUseTool: () => 'ask', sessionId: 's-approval',
      requestInteraction: request => { firstRequests.push(request); asked() },
      hooks: { 'interaction:request': request => { firstHooks.push(request) } },
      durable: { runtime: firstRuntime, onInterrupted: 'resume' },
    })
    const firstRun = first.run({ prompt: 'go' })
    await wasAsked
    await flushMicrotasks()
    expect([...journal.steps.keys()].some(name => name.endsWith('/approval/interaction'))).toBe(true)
    firstRuntime.crash()
    await expect(firstRun).rejects.toBeInstanceOf(SimulatedCrashError)

    const secondRuntime = createMemoryJournalRuntime({ journal })
    const secondRequests: InteractionRequest[] = []
    const secondHooks: InteractionRequest[] = []
    const second = createAgent({
      provider, tools: [countingTool('deploy', ledger)], canUseTool: () => 'ask', sessionId: 's-approval',
      requestInteraction: async request => { secondRequests.push(request); await secondRuntime.resolveAwakeable(request.awakeable.id, 'approve') },
      hooks: { 'interaction:request': request => { secondHooks.push(request) } },
      durable: { runtime: secondRuntime, onInterrupted: 'resume' },
    })
    const stats = await second.resume()
    expect(stats?.status).toBe('completed')
    expect(ledger).toEqual(['deploy'])
    expect(firstRequests).toHaveLength(1)
    expect(firstHooks).toHaveLength(1)
    expect(firstHooks[0]?.resumed).toBeUndefined()
    const id = firstRequests[0]?.awakeable.id
    expect(secondRequests).toEqual([{ ...firstRequests[0], resumed: true }])
    expect(secondHooks).toEqual([{ ...firstRequests[0], resumed: true }])
    expect(secondHooks[0]?.awakeable.id).toBe(id)
  })

  it('is not announced again when its answer arrived while no process ran', async () => {
    const journal = createMemoryJournal()
    const provider = scriptedProvider([{ toolCalls: [{ name: 'deploy', input: {} }] }, { text: 'done' }])
    const firstRuntime = createMemoryJournalRuntime({ journal })
    let asked: (request: InteractionRequest) => void = () => undefined
    const wasAsked = new Promise<InteractionRequest>(resolve => { asked = resolve })
    const first = createAgent({ provider, tools: [countingTool('deploy', [])], canUseTool: () => 'ask', sessionId: 's-answered', requestInteraction: request => { asked(request) }, durable: firstRuntime })
    const firstRun = first.run({ prompt: 'go' })
    const request = await wasAsked
    await flushMicrotasks()
    firstRuntime.crash()
    await expect(firstRun).rejects.toBeInstanceOf(SimulatedCrashError)
    const secondRuntime = createMemoryJournalRuntime({ journal })
    await secondRuntime.resolveAwakeable(request.awakeable.id, 'approve')
    const announced: InteractionRequest[] = []
    const second = createAgent({ provider, tools: [countingTool('deploy', [])], canUseTool: () => 'ask', sessionId: 's-answered', requestInteraction: again => { announced.push(again) }, hooks: { 'interaction:request': again => { announced.push(again) } }, durable: secondRuntime })
    expect((await second.resume())?.status).toBe('completed')
    expect(announced).toEqual([])
  })
})

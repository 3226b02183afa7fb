import { describe, expect, it } from 'vitest'
import { createAgent, INTERRUPTED_TOOL_TEXT } from 'zidane'
import { createMemoryJournal, createMemoryJournalRuntime, scriptedProvider, SimulatedCrashError } from 'zidane/testing'
import { countingTool } from '../helpers/tools'

function script() {
  return scriptedProvider([
    { toolCalls: [{ name: 'charge_card', input: {} }] },
    { toolCalls: [{ name: 'read_balance', input: {} }] },
    { text: 'all done' },
  ])
}

function resultTexts(provider: ReturnType<typeof scriptedProvider>, index: number): unknown[] {
  return (provider.requests[index]?.messages.at(-1)?.content ?? []).map(block => (block.type === 'tool_result' ? block.content : block.type))
}

describe('crash recovery on the in-memory journal', () => {
  it('does not request a finished model step again after a crash', async () => {
    const journal = createMemoryJournal()
    const ledger: string[] = []
    const provider = script()
    const tools = [countingTool('charge_card', ledger), countingTool('read_balance', ledger, { safe: true })]
    const first = createAgent({ provider, tools, durable: { runtime: createMemoryJournalRuntime({ journal, crashAt: { step: '/t2/model', when: 'before' } }), onInterrupted: 'resume' }, sessionId: 's1' })
    await expect(first.run({ prompt: 'pay' })).rejects.toBeInstanceOf(SimulatedCrashError)
    expect(provider.requests).toHaveLength(1)

    const second = createAgent({ provider, tools, durable: { runtime: createMemoryJournalRuntime({ journal }), onInterrupted: 'resume' }, sessionId: 's1' })
    const stats = await second.resume()
    expect(stats?.status).toBe('completed')
    expect(provider.requests).toHaveLength(3)
    expect(ledger).toEqual(['charge_card', 'read_balance'])
    const session = await second.session()
    expect(session.turns.map(turn => turn.id.split('-').slice(1).join('-'))).toEqual(['u', 't1-a', 't1-r', 't2-a', 't2-r', 't3-a'])
  })

  it('gives an unsafe call cut off by a crash the interrupted text instead of running it again', async () => {
    const journal = createMemoryJournal()
    const ledger: string[] = []
    const provider = script()
    const tools = [countingTool('charge_card', ledger), countingTool('read_balance', ledger, { safe: true })]
    const first = createAgent({ provider, tools, durable: createMemoryJournalRuntime({ journal, crashAt: { step: 'toolu_0_0', when: 'during' } }), sessionId: 's2' })
    const crashingProvider = provider
    const stepNames = (await first.session()).id
    expect(stepNames).toBe('s2')
    await expect(first.run({ prompt: 'pay' })).rejects.toBeInstanceOf(SimulatedCrashError)
    expect(ledger).toEqual(['charge_card'])
    const second = createAgent({ provider: crashingProvider, tools, durable: createMemoryJournalRuntime({ journal }), sessionId: 's2' })
    const stats = await second.resume()
    expect(stats?.status).toBe('completed')
    expect(ledger).toEqual(['charge_card', 'read_balance'])
    expect(resultTexts(provider, 1)).toEqual([INTERRUPTED_TOOL_TEXT])
    expect(provider.requests).toHaveLength(3)
  })

  it('runs a safe call cut off by a crash again', async () => {
    const journal = createMemoryJournal()
    const ledger: string[] = []
    const provider = script()
    const tools = [countingTool('charge_card', ledger), countingTool('read_balance', ledger, { safe: true })]
    const first = createAgent({ provider, tools, durable: createMemoryJournalRuntime({ journal, crashAt: { step: 'toolu_1_0', when: 'during' } }), sessionId: 's3' })
    await expect(first.run({ prompt: 'pay' })).rejects.toBeInstanceOf(SimulatedCrashError)
    const second = createAgent({ provider, tools, durable: createMemoryJournalRuntime({ journal }), sessionId: 's3' })
    let replayDone = 0
    second.hooks.hook('replay:done', () => { replayDone++ })
    const resuming: string[] = []
    second.hooks.hook('tool:resuming', event => { resuming.push(event.name) })
    await second.resume()
    expect(ledger).toEqual(['charge_card', 'read_balance', 'read_balance'])
    expect(resuming).toEqual(['read_balance'])
    expect(replayDone).toBe(1)
    expect(resultTexts(provider, 2)).toEqual(['read_balance done'])
  })

  it("with onInterrupted 'resume', run() continues the interrupted run first, then runs the new prompt", async () => {
    const journal = createMemoryJournal()
    const ledger: string[] = []
    const provider = scriptedProvider([{ toolCalls: [{ name: 'charge_card', input: {} }] }, { text: 'first done' }, { text: 'second done' }])
    const tools = [countingTool('charge_card', ledger)]
    const first = createAgent({ provider, tools, durable: createMemoryJournalRuntime({ journal, crashAt: { step: '/t2/model', when: 'before' } }), sessionId: 's4' })
    await expect(first.run({ prompt: 'one' })).rejects.toBeInstanceOf(SimulatedCrashError)
    const second = createAgent({ provider, tools, durable: { runtime: createMemoryJournalRuntime({ journal }), onInterrupted: 'resume' }, sessionId: 's4' })
    const stats = await second.run({ prompt: 'two' })
    expect(stats.text).toBe('second done')
    const session = await second.session()
    expect(session.runs.map(run => run.status)).toEqual(['completed', 'completed'])
    expect(ledger).toEqual(['charge_card'])
  })

  it("with 'heal' (a bare runtime), run() closes the open calls with the heal text and starts the new run", async () => {
    const journal = createMemoryJournal()
    const provider = scriptedProvider([{ toolCalls: [{ name: 'charge_card', input: {} }] }, { text: 'fresh' }])
    const tools = [countingTool('charge_card', [])]
    const first = createAgent({ provider, tools, durable: createMemoryJournalRuntime({ journal, crashAt: { step: 'toolu_0_0', when: 'during' } }), sessionId: 's5' })
    await expect(first.run({ prompt: 'one' })).rejects.toBeInstanceOf(SimulatedCrashError)
    const second = createAgent({ provider, tools, durable: createMemoryJournalRuntime({ journal }), sessionId: 's5' })
    const stats = await second.run({ prompt: 'two' })
    expect(stats.status).toBe('completed')
    const session = await second.session()
    expect(session.runs.map(run => run.status)).toEqual(['interrupted', 'completed'])
    const healed = session.turns.find(turn => turn.id.startsWith('heal-'))
    expect(healed?.content[0]).toMatchObject({ type: 'tool_result', isError: true, content: expect.stringContaining('[Tool use interrupted]') })
    expect(await second.resume()).toBeNull()
  })

  it('resume() resolves null and fires resume:mismatch when the history was rewritten', async () => {
    const journal = createMemoryJournal()
    const provider = scriptedProvider([{ toolCalls: [{ name: 'charge_card', input: {} }] }, { text: 'x' }])
    const tools = [countingTool('charge_card', [])]
    const seed = createAgent({ provider: scriptedProvider([{ text: 'earlier' }]), durable: createMemoryJournalRuntime({ journal }), sessionId: 's6' })
    await seed.run({ prompt: 'earlier prompt' })
    const first = createAgent({ provider, tools, durable: createMemoryJournalRuntime({ journal, crashAt: { step: 'toolu_0_0', when: 'during' } }), sessionId: 's6' })
    await expect(first.run({ prompt: 'one' })).rejects.toBeInstanceOf(SimulatedCrashError)
    const stored = await journal.sessionStore.load('s6')
    if (!stored) throw new Error('missing session')
    stored.turns.splice(0, 1)
    await journal.sessionStore.save(stored)
    const second = createAgent({ provider, tools, durable: createMemoryJournalRuntime({ journal }), sessionId: 's6' })
    const mismatches: string[] = []
    second.hooks.hook('resume:mismatch', event => { mismatches.push(event.reason) })
    expect(await second.resume()).toBeNull()
    expect(mismatches).toHaveLength(1)
  })

  it('counts usage of the turns the crashed process saved exactly once', async () => {
    const journal = createMemoryJournal()
    const provider = scriptedProvider([
      { toolCalls: [{ name: 'charge_card', input: {} }], usage: { inputTokens: 100, outputTokens: 10 }, costUsd: 0.5 },
      { text: 'done', usage: { inputTokens: 200, outputTokens: 20 }, costUsd: 0.25 },
    ])
    const tools = [countingTool('charge_card', [])]
    const first = createAgent({ provider, tools, durable: createMemoryJournalRuntime({ journal, crashAt: { step: '/t2/model', when: 'before' } }), sessionId: 's7', behavior: { maxCostUsd: 2 } })
    await expect(first.run({ prompt: 'go' })).rejects.toBeInstanceOf(SimulatedCrashError)
    const second = createAgent({ provider, tools, durable: createMemoryJournalRuntime({ journal }), sessionId: 's7' })
    const stats = await second.resume()
    expect(stats?.usage.inputTokens).toBe(300)
    expect(stats?.costUsd).toBeCloseTo(0.75)
    const session = await second.session()
    expect(session.runs[0]?.limits).toMatchObject({ maxCostUsd: 2 })
  })

  it('refuses a session of another store when the agent is created, before any run', async () => {
    const { createSession, createMemorySessionStore } = await import('zidane/session')
    const session = await createSession({ store: createMemorySessionStore() })
    expect(() => createAgent({ provider: scriptedProvider([]), durable: createMemoryJournalRuntime({ journal: createMemoryJournal() }), session })).toThrow(expect.objectContaining({ code: 'session_store_mismatch' }))
  })
})

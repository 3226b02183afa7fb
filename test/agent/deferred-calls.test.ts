import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import type { SteeringInbox } from 'zidane/durable'
import { createMemoryJournal, createMemoryJournalRuntime, SimulatedCrashError } from 'zidane/durable'
import { restateRuntime } from 'zidane/restate'
import { scriptedProvider } from 'zidane/testing'
import { createFakeObjectContext } from '../helpers/restate/fake-context'

function lookTool(runs: string[]): ToolDef {
  return { spec: { name: 'look', description: 'Look.', inputSchema: { type: 'object' } }, replay: 'safe', isConcurrencySafe: true, execute: async input => { runs.push(String(input.at)); return `saw ${String(input.at)}` } }
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise(resolve => setTimeout(resolve, 5))
}

/** An inbox that hands `text` out once, at the turn it is asked at. */
function inboxOnce(text: string, atTurn: number): SteeringInbox {
  let taken = false
  return { take: async ({ turn }) => (taken || turn !== atTurn ? [] : (taken = true, [{ id: 'm1', text }])) }
}

describe('safe calls deferred to the next model step (Restate runtime)', () => {
  it('keeps their results and the steered messages when that model request is stopped', async () => {
    const runs: string[] = []
    const provider = scriptedProvider([{ toolCalls: [{ name: 'look', input: { at: 'a' } }] }, { text: 'late', delayMs: 5_000 }])
    const agent = createAgent({ provider, tools: [lookTool(runs)], durable: restateRuntime(createFakeObjectContext('abort-deferred'), { idSeed: 'abort-deferred' }), steering: inboxOnce('also look at b', 2) })
    const running = agent.run({ prompt: 'look' })
    await until(() => provider.requests.length > 1)
    agent.abort()
    expect((await running).status).toBe('aborted')
    const session = await agent.session()
    const turns = session?.turns.map(turn => ({ id: turn.id.replace(/^run_[^-]+/, 'run'), content: turn.content.map(block => (block.type === 'tool_result' ? block.content : block.type === 'text' ? block.text : block.type)) })) ?? []
    expect(turns.slice(1)).toEqual([
      { id: 'run-t1-a', content: ['tool_use'] },
      { id: 'run-t1-r', content: ['saw a'] },
      { id: 'run-t2-s', content: ['also look at b'] },
    ])
    expect(runs).toEqual(['a'])
  })

  it('announces a call once, and ends it, when the run stops before another model step', async () => {
    const runs: string[] = []
    const provider = scriptedProvider([{ toolCalls: [{ name: 'look', input: { at: 'a' } }] }, { text: 'never' }])
    const agent = createAgent({ provider, tools: [lookTool(runs)], durable: restateRuntime(createFakeObjectContext('limit-deferred'), { idSeed: 'limit-deferred' }) })
    const starts: string[] = []
    const ends: string[] = []
    agent.hooks.hook('tool:start', event => { starts.push(event.callId) })
    agent.hooks.hook('tool:end', event => { ends.push(event.callId) })
    const stats = await agent.run({ prompt: 'look', maxTurns: 1 })
    expect(stats.status).toBe('limit')
    expect(runs).toEqual(['a'])
    expect(starts).toHaveLength(1)
    expect(ends).toEqual(starts)
  })

  it('runs a turn of more calls than one entry should carry in steps of their own', async () => {
    const runs: string[] = []
    const calls = Array.from({ length: 9 }, (_, index) => ({ name: 'look', input: { at: `f${index}` } }))
    const provider = scriptedProvider([{ toolCalls: calls }, { toolCalls: calls.slice(0, 2) }, { text: 'done' }])
    const ctx = createFakeObjectContext('wide-turn')
    await createAgent({ provider, tools: [lookTool(runs)], durable: restateRuntime(ctx, { idSeed: 'wide-turn' }) }).run({ prompt: 'look at all' })
    const toolSteps = ctx.runs.filter(run => run.name.endsWith('/tool'))
    // Nine calls of up to 1 MiB each pass the 8 MiB budget: steps of their own; the turn of two rides on the model step.
    expect(toolSteps).toHaveLength(9)
    expect(runs).toHaveLength(11)
  })
})

describe('a crash in a model step that ran deferred calls', () => {
  it('runs the calls in steps of their own on the next attempt, then asks the model in a step of its own', async () => {
    const journal = createMemoryJournal()
    const runs: string[] = []
    const provider = scriptedProvider(request => (request.messages.some(message => message.content.some(block => block.type === 'tool_result')) ? { text: 'done' } : { toolCalls: [{ name: 'look', input: { at: 'a' } }] }))
    const first = createAgent({ provider, tools: [lookTool(runs)], durable: createMemoryJournalRuntime({ journal, deferSafeCalls: true, crashAt: { step: '/t2/model', when: 'during' } }), sessionId: 'crash-deferred' })
    await expect(first.run({ prompt: 'look' })).rejects.toBeInstanceOf(SimulatedCrashError)
    expect(runs).toEqual(['a'])
    const second = createAgent({ provider, tools: [lookTool(runs)], durable: createMemoryJournalRuntime({ journal, deferSafeCalls: true }), sessionId: 'crash-deferred' })
    await second.resume()
    // Run again (a safe call's contract), this time in a step named for the call, so a crash there is its own.
    expect(runs).toEqual(['a', 'a'])
    expect([...journal.steps.keys()].map(name => name.replace(/^run_[^/]+/, 'run'))).toEqual(expect.arrayContaining(['run/t1/model', 'run/t2/model', 'run/t1/toolu_0_0/tool', 'run/t2/after-calls/model']))
    const session = await second.session()
    expect(session?.runs.at(-1)?.status).toBe('completed')
    expect(session?.turns.map(turn => turn.id.replace(/^run_[^-]+/, 'run')).slice(1)).toEqual(['run-t1-a', 'run-t1-r', 'run-t2-a'])
  })
})

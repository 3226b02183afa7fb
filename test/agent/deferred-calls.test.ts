import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import type { SteeringInbox } from 'zidane/durable'
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

import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import { createSpawnTool } from 'zidane/tools'
import { createMemorySessionStore, createSession } from 'zidane/session'
import { scriptedProvider } from 'zidane/testing'
import type { ModelRequest } from 'zidane/providers'

function childScript(request: ModelRequest) {
  const prompt = request.messages[0]?.content[0]
  const task = prompt?.type === 'text' ? prompt.text : '?'
  if (task.startsWith('nest')) {
    const calls = request.messages.length === 1 ? [{ name: 'spawn', input: { task: `leaf of ${task}` } }] : []
    return calls.length > 0 ? { toolCalls: calls } : { text: `nested ${task} done` }
  }
  return { text: `answer to ${task}`, delayMs: 40, costUsd: 0.01 }
}

describe('createSpawnTool', () => {
  it('runs children in parallel, merges them into the session with labels, and adds their cost', async () => {
    const spans: Record<string, [number, number]> = {}
    const parentProvider = scriptedProvider([{ toolCalls: [{ name: 'spawn', input: { task: 'a' } }, { name: 'spawn', input: { task: 'b' } }, { name: 'spawn', input: { task: 'c' } }] }, { text: 'summary' }])
    const spawn = createSpawnTool({ createAgent, childAgent: () => ({ provider: scriptedProvider(childScript) }) })
    const session = await createSession({ store: createMemorySessionStore() })
    const agent = createAgent({ provider: parentProvider, tools: [spawn], session })
    agent.hooks.hook('child:run:start', event => { spans[event.label] = [Date.now(), 0] })
    agent.hooks.hook('child:run:end', event => { const span = spans[event.label]; if (span) span[1] = Date.now() })
    const stats = await agent.run({ prompt: 'fan out' })
    expect(stats.status).toBe('completed')
    expect(Object.keys(spans).sort()).toEqual(['child-1', 'child-2', 'child-3'])
    const starts = Object.values(spans).map(span => span[0])
    const ends = Object.values(spans).map(span => span[1])
    expect(Math.max(...starts)).toBeLessThan(Math.min(...ends))
    expect(session.runs.filter(run => run.label).map(run => [run.label, run.depth])).toEqual([['child-1', 1], ['child-2', 1], ['child-3', 1]])
    const results = parentProvider.requests[1]?.messages.at(-1)?.content.map(block => (block.type === 'tool_result' ? block.content : ''))
    expect(results).toEqual(['answer to a', 'answer to b', 'answer to c'])
    expect(stats.costUsd).toBeCloseTo(0.03)
    const childTurns = session.turns.filter(turn => turn.runId.includes('.'))
    expect(childTurns.length).toBe(6)
  })

  it('merges grandchildren with their depth and refuses to go deeper than maxDepth', async () => {
    const spawn = createSpawnTool({ createAgent, maxDepth: 2, childAgent: () => ({ provider: scriptedProvider(childScript), tools: [spawn] }) })
    const session = await createSession({ store: createMemorySessionStore() })
    const agent = createAgent({ provider: scriptedProvider([{ toolCalls: [{ name: 'spawn', input: { task: 'nest one' } }] }, { text: 'ok' }]), tools: [spawn], session })
    await agent.run({ prompt: 'deep' })
    const labelled = session.runs.filter(run => run.label).map(run => [run.label, run.depth])
    expect(labelled).toEqual([['child-1', 1], ['child-1/child-1', 2]])

    const tooDeep = createSpawnTool({ createAgent, maxDepth: 1, childAgent: () => ({ provider: scriptedProvider(childScript), tools: [tooDeep] }) })
    const shallowProvider = scriptedProvider([{ toolCalls: [{ name: 'spawn', input: { task: 'nest two' } }] }, { text: 'ok' }])
    const refused: string[] = []
    const parent = createAgent({ provider: shallowProvider, tools: [tooDeep] })
    parent.hooks.hook('child:tool:end', event => { if (event.isError) refused.push(event.name) })
    await parent.run({ prompt: 'deep' })
    expect(refused).toEqual(['spawn'])
  })
})

import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import { scriptedProvider } from 'zidane/testing'
import { timedTool } from '../helpers/tools'

describe('tool scheduling', () => {
  it('runs concurrency-safe calls together and unsafe calls one at a time, in the model order', async () => {
    const log: Array<{ name: string; input: string; start: number; end: number }> = []
    const provider = scriptedProvider([
      { toolCalls: [
        { name: 'look', input: { id: '1' } },
        { name: 'look', input: { id: '2' } },
        { name: 'look', input: { id: '3' } },
        { name: 'change', input: { id: '4' } },
        { name: 'change', input: { id: '5' } },
      ] },
      { text: 'ok' },
    ])
    const agent = createAgent({ provider, tools: [timedTool('look', { delayMs: 60, safe: true, log }), timedTool('change', { delayMs: 20, safe: false, log })] })
    await agent.run({ prompt: 'go' })
    const looks = log.filter(entry => entry.name === 'look')
    const latestLookStart = Math.max(...looks.map(entry => entry.start))
    const earliestLookEnd = Math.min(...looks.map(entry => entry.end))
    expect(latestLookStart).toBeLessThan(earliestLookEnd)
    const changes = log.filter(entry => entry.name === 'change')
    expect(changes.map(entry => entry.input)).toEqual(['4', '5'])
    expect((changes[1]?.start ?? 0)).toBeGreaterThanOrEqual(changes[0]?.end ?? 0)
    expect(changes[0]?.start ?? 0).toBeGreaterThanOrEqual(Math.max(...looks.map(entry => entry.end)))
    const results = provider.requests[1]?.messages.at(-1)?.content.map(block => (block.type === 'tool_result' ? block.content : ''))
    expect(results).toEqual(['look:1', 'look:2', 'look:3', 'change:4', 'change:5'])
  })

  it('never runs more than maxConcurrentTools safe calls at once', async () => {
    const log: Array<{ name: string; input: string; start: number; end: number }> = []
    const calls = Array.from({ length: 6 }, (_, index) => ({ name: 'look', input: { id: String(index) } }))
    const agent = createAgent({ provider: scriptedProvider([{ toolCalls: calls }, { text: 'ok' }]), tools: [timedTool('look', { delayMs: 40, safe: true, log })], behavior: { maxConcurrentTools: 2 } })
    await agent.run({ prompt: 'go' })
    const maxOverlap = Math.max(...log.map(entry => log.filter(other => other.start < entry.end && other.end > entry.start).length))
    expect(maxOverlap).toBeLessThanOrEqual(2)
    expect(log).toHaveLength(6)
  })
})

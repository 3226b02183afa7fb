import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import { scriptedProvider } from 'zidane/testing'
import { countingTool } from '../helpers/tools'

const loopForever = () => ({ toolCalls: [{ name: 'work', input: {} }] })

describe('run limits', () => {
  it('stops at maxTurns with status limit', async () => {
    const provider = scriptedProvider(() => loopForever())
    const stats = await createAgent({ provider, tools: [countingTool('work', [])], behavior: { maxTurns: 3 } }).run({ prompt: 'go' })
    expect(stats.status).toBe('limit')
    expect(stats.turns).toBe(3)
    expect(stats.reason).toContain('maxTurns')
  })

  it('lets a run override maxTurns', async () => {
    const provider = scriptedProvider(() => loopForever())
    const stats = await createAgent({ provider, tools: [countingTool('work', [])], behavior: { maxTurns: 10 } }).run({ prompt: 'go', maxTurns: 2 })
    expect(stats.turns).toBe(2)
  })

  it('stops at maxWallMs with status timeout', async () => {
    const provider = scriptedProvider(() => ({ ...loopForever(), delayMs: 30 }))
    const stats = await createAgent({ provider, tools: [countingTool('work', [])], behavior: { maxWallMs: 70 } }).run({ prompt: 'go' })
    expect(stats.status).toBe('timeout')
    expect(stats.turns).toBeGreaterThanOrEqual(1)
    expect(stats.turns).toBeLessThanOrEqual(4)
  })

  it('stops before the request that would exceed maxCostUsd', async () => {
    const provider = scriptedProvider(() => ({ ...loopForever(), costUsd: 0.4 }))
    const stats = await createAgent({ provider, tools: [countingTool('work', [])], behavior: { maxCostUsd: 1 } }).run({ prompt: 'go' })
    expect(stats.status).toBe('limit')
    expect(provider.requests).toHaveLength(2)
    expect(stats.costUsd).toBeCloseTo(0.8)
    expect(stats.costUsd).toBeLessThanOrEqual(1)
    expect(stats.reason).toContain('maxCostUsd')
  })

  it('sums usage and cost across turns', async () => {
    const provider = scriptedProvider([
      { toolCalls: [{ name: 'work', input: {} }], usage: { inputTokens: 100, outputTokens: 10, cacheReadTokens: 50, cacheWriteTokens: 5 }, costUsd: 0.01 },
      { text: 'done', usage: { inputTokens: 200, outputTokens: 20, cacheReadTokens: 60, cacheWriteTokens: 0 }, costUsd: 0.02 },
    ])
    const stats = await createAgent({ provider, tools: [countingTool('work', [])] }).run({ prompt: 'go' })
    expect(stats.usage).toMatchObject({ inputTokens: 300, outputTokens: 30, cacheReadTokens: 110, cacheWriteTokens: 5 })
    expect(stats.costUsd).toBeCloseTo(0.03)
  })
})

import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import type { ToolStateStore } from '../../src/session/types'
import { scriptedProvider } from 'zidane/testing'

/** A tool-state store that counts its snapshots (the loop takes one before each group of calls that may use it). */
function countingStore(): ToolStateStore & { snapshots: number } {
  const values: Record<string, never> = {}
  const store = {
    snapshots: 0,
    get: async () => null,
    set: async () => undefined,
    snapshot: async () => { store.snapshots += 1; return { ...values } },
  }
  return store
}

const stateless: ToolDef = {
  spec: { name: 'stateless', description: 'Uses no tool state', inputSchema: { type: 'object' } },
  usesToolState: false,
  execute: async (_input, ctx) => (ctx.toolState === undefined ? 'no tool state' : 'had tool state'),
}
const stateful: ToolDef = {
  spec: { name: 'stateful', description: 'May use tool state', inputSchema: { type: 'object' } },
  execute: async (_input, ctx) => (ctx.toolState === undefined ? 'no tool state' : 'had tool state'),
}

describe('tools that use no tool state', () => {
  it('get none, and a group of only such calls reads none', async () => {
    const toolState = countingStore()
    const provider = scriptedProvider([{ toolCalls: [{ name: 'stateless', input: {} }, { name: 'stateless', input: {} }] }, { text: 'done' }])
    await createAgent({ provider, tools: [stateless], toolState }).run({ prompt: 'go' })
    expect(toolState.snapshots).toBe(0)
    expect(provider.requests.at(-1)?.messages.at(-1)?.content).toMatchObject([{ content: 'no tool state' }, { content: 'no tool state' }])
  })

  it('leave the read to a group that holds a call of a tool that may use it', async () => {
    const toolState = countingStore()
    const provider = scriptedProvider([{ toolCalls: [{ name: 'stateless', input: {} }, { name: 'stateful', input: {} }] }, { text: 'done' }])
    await createAgent({ provider, tools: [stateless, stateful], toolState }).run({ prompt: 'go' })
    expect(toolState.snapshots).toBeGreaterThan(0)
    expect(provider.requests.at(-1)?.messages.at(-1)?.content).toMatchObject([{ content: 'no tool state' }, { content: 'had tool state' }])
  })
})

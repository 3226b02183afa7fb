import * as restate from '@restatedev/restate-sdk'
import { RestatePromise } from '@restatedev/restate-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../src/agent/create-agent'
import type { ToolDef } from '../../src/tools/tool'
import { createSession, loadSession } from '../../src/session/session'
import { scriptedProvider } from '../../src/testing/index'
import { restateRuntime } from '../../src/restate/index'
import type { RestateHarness } from '../helpers/restate/restate-harness'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'

const modelCalls = new Map<string, number>()
const toolRuns = new Map<string, number>()
const failedOnce = new Set<string>()

const agentProbe = restate.object({
  name: 'AgentProbe',
  handlers: {
    run: async (ctx: restate.ObjectContext): Promise<{ status: string; text: string; turns: number; toolCalls: number }> => {
      const key = ctx.key
      const durable = restateRuntime(ctx, { promises: RestatePromise, idSeed: key })
      const store = durable.stores.session
      const clock = { now: () => durable.now() }
      const session = await loadSession(store, key, { clock }) ?? await createSession({ id: key, store, clock })
      const note: ToolDef = {
        spec: { name: 'note', description: 'Write a note.', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } },
        isConcurrencySafe: true,
        execute: async input => {
          toolRuns.set(`${key}:${String(input.text)}`, (toolRuns.get(`${key}:${String(input.text)}`) ?? 0) + 1)
          await new Promise(resolve => setTimeout(resolve, 50))
          return `noted ${String(input.text)}`
        },
      }
      // Scripted by the history, not by the provider's request index: each attempt builds a new provider.
      const provider = scriptedProvider(request => {
        modelCalls.set(key, (modelCalls.get(key) ?? 0) + 1)
        if (!request.messages.some(message => message.content.some(block => block.type === 'tool_result'))) return { toolCalls: [{ name: 'note', input: { text: 'a' } }, { name: 'note', input: { text: 'b' } }] }
        return { text: 'all noted' }
      })
      const agent = createAgent({ provider, tools: [note], durable, session })
      const stats = await agent.run({ prompt: 'take notes' })
      if (!failedOnce.has(key)) {
        failedOnce.add(key)
        throw new Error('replay me')
      }
      const stored = await loadSession(store, key)
      return { status: stats.status, text: stats.text, turns: stored?.turns.length ?? 0, toolCalls: stats.toolCalls }
    },
  },
})

const hookFailed = new Set<string>()

/**
 * A run whose `model:delta` hook throws on its first attempt (a viewer that went away), then the attempt fails after
 * the run (a crash): the next attempt replays the run, and the hook, which fires only inside live steps, does not.
 */
const hookProbe = restate.object({
  name: 'HookProbe',
  handlers: {
    run: async (ctx: restate.ObjectContext): Promise<{ status: string; text: string }> => {
      const key = ctx.key
      const durable = restateRuntime(ctx, { promises: RestatePromise, idSeed: key })
      const session = await createSession({ id: key, store: durable.stores.session, clock: { now: () => durable.now() } })
      const echo: ToolDef = { spec: { name: 'echo', description: 'Echo.', inputSchema: { type: 'object' } }, execute: async () => 'echoed' }
      const provider = scriptedProvider(request => (request.messages.some(message => message.content.some(block => block.type === 'tool_result'))
        ? { text: 'done' }
        : { text: 'calling echo', toolCalls: [{ name: 'echo', input: {} }] }))
      const agent = createAgent({ provider, tools: [echo], durable, session })
      agent.hooks.hook('model:delta', () => {
        if (hookFailed.has(key)) return
        hookFailed.add(key)
        throw new Error('viewer went away')
      })
      const stats = await agent.run({ prompt: 'echo once' })
      if (!failedOnce.has(key)) {
        failedOnce.add(key)
        throw new Error('replay me')
      }
      return { status: stats.status, text: stats.text }
    },
  },
})

describe.each(REPLAY_MODES)('createAgent on restateRuntime against a real server ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  beforeAll(async () => { harness = await startRestateHarness({ services: [agentProbe, hookProbe], alwaysReplay }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  it('calls the model once per model step and each tool once across replays', async () => {
    const key = `agent-${alwaysReplay}`
    const response = await (harness as RestateHarness).call<{ status: string; text: string; turns: number; toolCalls: number }>(`AgentProbe/${key}/run`)
    expect(response.status).toBe(200)
    expect(response.body.status).toBe('completed')
    expect(response.body.text).toBe('all noted')
    expect(response.body.toolCalls).toBe(2)
    expect(modelCalls.get(key)).toBe(2)
    expect(toolRuns.get(`${key}:a`)).toBe(1)
    expect(toolRuns.get(`${key}:b`)).toBe(1)
    expect(response.body.turns).toBeGreaterThanOrEqual(4)
  })

  it('a hook that throws on one attempt does not change the run: it completes, and its replay matches the journal', async () => {
    const response = await (harness as RestateHarness).call<{ status: string; text: string }>(`HookProbe/hook-${alwaysReplay}/run`)
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ status: 'completed', text: 'done' })
    expect(hookFailed.has(`hook-${alwaysReplay}`)).toBe(true)
  }, 30_000)
})

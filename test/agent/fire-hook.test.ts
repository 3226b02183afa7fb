import { describe, expect, it } from 'vitest'
import { AgentHookable, fireHook } from '../../src/agent/fire-hook'
import { createAgent } from 'zidane'
import { scriptedProvider } from 'zidane/testing'
import { countingTool } from '../helpers/tools'

describe('the agent hook registry', () => {
  it('calls hooks in order, awaiting each promise, and reports a throwing hook as a rejection', async () => {
    const hooks = new AgentHookable()
    const calls: string[] = []
    hooks.hook('turn:end', async ({ turn }) => { await new Promise(resolve => setTimeout(resolve, 5)); calls.push(`a${turn}`) })
    hooks.hook('turn:end', ({ turn }) => { calls.push(`b${turn}`) })
    await hooks.callHook('turn:end', { runId: 'r', turn: 1 })
    expect(calls).toEqual(['a1', 'b1'])
    hooks.hook('turn:start', () => { throw new Error('boom') })
    await expect(hooks.callHook('turn:start', { runId: 'r', turn: 1 })).rejects.toThrow('boom')
    expect(hooks.callHook('run:end', { runId: 'r', stats: {} as never })).toBeUndefined()
  })

  it('calls a hook straight from the loop, without hookable\'s task wrapper (console.createTask per call)', async () => {
    const stacks: string[] = []
    const agent = createAgent({ provider: scriptedProvider([{ toolCalls: [{ name: 'work', input: {} }] }, { text: 'done' }]), tools: [countingTool('work', [])] })
    agent.hooks.hook('tool:end', () => { stacks.push(new Error('probe').stack ?? '') })
    await agent.run({ prompt: 'go' })
    expect(stacks).toHaveLength(1)
    expect(stacks[0]).not.toContain('serialTaskCaller')
  })

  it('tells whether a name has a listener, through every way hookable registers and removes one', () => {
    const hooks = new AgentHookable()
    expect(hooks.listens('session:event')).toBe(false)
    const unregister = hooks.hook('session:event', () => undefined)
    expect(hooks.listens('session:event')).toBe(true)
    expect(hooks.listens('turn:end')).toBe(false)
    unregister()
    expect(hooks.listens('session:event')).toBe(false)
    hooks.hookOnce('session:event', () => undefined)
    expect(hooks.listens('session:event')).toBe(true)
    void hooks.callHook('session:event', { type: 'steer', at: 0, data: {} })
    expect(hooks.listens('session:event')).toBe(false)
    const remove = hooks.addHooks({ 'session:event': () => undefined })
    expect(hooks.listens('session:event')).toBe(true)
    remove()
    expect(hooks.listens('session:event')).toBe(false)
    hooks.hook('session:event', () => undefined)
    hooks.removeAllHooks()
    expect(hooks.listens('session:event')).toBe(false)
    const spies: string[] = []
    hooks.beforeEach(event => { spies.push(event.name) })
    expect(hooks.listens('session:event')).toBe(true)
    void hooks.callHook('turn:end', { runId: 'r', turn: 1 })
    expect(spies).toEqual(['turn:end'])
  })

  it('fireHook keeps a rejecting hook\'s failure on the sink, and a call nobody listens to costs no promise', async () => {
    const hooks = new AgentHookable()
    const sink: { hookFailure?: string } = {}
    fireHook(hooks, sink, 'replay:done', {})
    expect(sink.hookFailure).toBeUndefined()
    hooks.hook('replay:done', async () => { throw new Error('late') })
    fireHook(hooks, sink, 'replay:done', {})
    await new Promise(resolve => setImmediate(resolve))
    expect(sink.hookFailure).toBe('hook replay:done failed: late')
  })
})

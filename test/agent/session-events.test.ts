import { describe, expect, it, vi } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { EventRecorder } from 'zidane/session'
import type { NewSessionEvent } from 'zidane/session'
import { scriptedProvider } from 'zidane/testing'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { main } from '../../src/cli/main'
import { captureIo } from '../cli/capture-io'

const echo: ToolDef = {
  spec: { name: 'echo', description: 'Echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  execute: async input => `echo:${String(input.text)}`,
}

describe('session events', () => {
  it('fire as the session is written, in the shape of the deployment log', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'echo', input: { text: 'hi' } }] }, { text: 'finished' }])
    const agent = createAgent({ provider, tools: [echo] })
    const events: NewSessionEvent[] = []
    agent.hooks.hook('session:event', (event) => { events.push(event) })
    const stats = await agent.run({ prompt: 'go' })
    expect(events.map(event => event.type)).toEqual(['run:start', 'tool:start', 'tool:end', 'turn:end', 'turn:end', 'run:end'])
    expect(events[0]).toMatchObject({ type: 'run:start', data: { runId: stats.runId, prompt: 'go' } })
    expect(events[1]).toMatchObject({ type: 'tool:start', data: { name: 'echo', input: { text: 'hi' } } })
    expect(events[4]).toMatchObject({ type: 'turn:end', data: { text: 'finished' } })
    expect(events[5]).toMatchObject({ type: 'run:end', data: { status: 'completed', text: 'finished', totals: { modelRequests: 2 } } })
    for (const event of events) expect(typeof event.at).toBe('number')
  })

  it('do not repeat what the session held before the agent opened it', async () => {
    const provider = scriptedProvider([{ text: 'one' }, { text: 'two' }])
    const agent = createAgent({ provider })
    await agent.run({ prompt: 'first' })
    const second = createAgent({ provider, session: await agent.session() })
    const events: NewSessionEvent[] = []
    second.hooks.hook('session:event', (event) => { events.push(event) })
    await second.run({ prompt: 'second' })
    expect(events.map(event => event.type)).toEqual(['run:start', 'turn:end', 'run:end'])
    expect(events[0]?.data).toMatchObject({ prompt: 'second' })
  })

  it("are what the CLI's --stream-json prints, one per line", async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'zidane-stream-json-'))
    try {
      const cli = captureIo({ tty: false, cwd })
      expect(await main(['run', '--session-db', 'sessions.db', '--session', 'a', '--prompt', 'hello', '--stream-json'], cli)).toBe(0)
      const lines = cli.out().trim().split('\n').map(line => JSON.parse(line) as { type: string; data: Record<string, unknown> })
      const durable = lines.filter(line => line.type !== 'model:delta')
      expect(durable.map(line => line.type)).toEqual(['run:start', 'turn:end', 'run:end'])
      expect(durable[0]?.data).toMatchObject({ prompt: 'hello' })
      const deltas = lines.filter(line => line.type === 'model:delta').map(line => String(line.data.text ?? line.data.delta ?? ''))
      expect(deltas.join('')).toBe(durable[1]?.data.text)
    } finally {
      rmSync(cwd, { recursive: true, force: true })
    }
  })

  it('are not built while no session:event hook listens', async () => {
    const turnEvents = vi.spyOn(EventRecorder.prototype, 'turnEvents')
    const runEvents = vi.spyOn(EventRecorder.prototype, 'runEvents')
    try {
      const agent = createAgent({ provider: scriptedProvider([{ toolCalls: [{ name: 'echo', input: { text: 'hi' } }] }, { text: 'finished' }]), tools: [echo] })
      expect((await agent.run({ prompt: 'go' })).status).toBe('completed')
      expect(turnEvents).not.toHaveBeenCalled()
      expect(runEvents).not.toHaveBeenCalled()
    } finally {
      turnEvents.mockRestore()
      runEvents.mockRestore()
    }
  })

  it('reach a hook added during a run from the next write on, as a hook there from the start sees them', async () => {
    const script = [{ toolCalls: [{ name: 'echo', input: { text: 'a' } }] }, { toolCalls: [{ name: 'echo', input: { text: 'b' } }] }, { text: 'finished' }]
    const throughout: NewSessionEvent[] = []
    const first = createAgent({ provider: scriptedProvider(script), tools: [echo], sessionId: 'same' })
    first.hooks.hook('session:event', (event) => { throughout.push(event) })
    await first.run({ prompt: 'go', runId: 'run_1' })
    const late: NewSessionEvent[] = []
    const second = createAgent({ provider: scriptedProvider(script), tools: [echo], sessionId: 'same' })
    // Added once the first tool call's result is written: its turn's end and everything after come through.
    second.hooks.hook('tool:end', () => { if (late.length === 0) second.hooks.hook('session:event', (event) => { late.push(event) }) })
    await second.run({ prompt: 'go', runId: 'run_1' })
    const shape = (events: NewSessionEvent[]): unknown[] => events.map(event => ({ type: event.type, data: event.data }))
    const fromSecondCall = throughout.findIndex(event => event.type === 'tool:end')
    expect(shape(late)).toEqual(shape(throughout.slice(fromSecondCall)))
  })
})

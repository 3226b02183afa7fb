import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { deliverSteering } from 'zidane/durable/sqlite'
import { scriptedProvider } from 'zidane/testing'
import { useTempFiles } from './sqlite-test-helpers'

const big: ToolDef = {
  spec: { name: 'dump', description: 'Large output', inputSchema: { type: 'object', properties: {} } },
  replay: 'safe',
  execute: async () => 'x'.repeat(300 * 1024),
}

describe('agents on the SQLite runtime', () => {
  const files = useTempFiles()

  it('runs, persists the session and reloads it in a later runtime', async () => {
    const runtime = files.open()
    const agent = createAgent({ provider: scriptedProvider([{ text: 'hello' }]), durable: runtime, sessionId: 'keep' })
    const stats = await agent.run({ prompt: 'hi' })
    expect(stats.status).toBe('completed')
    runtime.close()
    const again = files.open()
    const data = await again.stores.session.load('keep')
    expect(data?.turns.map(turn => turn.role)).toEqual(['user', 'assistant'])
    expect(data?.runs[0]).toMatchObject({ id: stats.runId, status: 'completed' })
    expect(await again.recoverInterruptedRuns()).toEqual([])
  })

  it('sends outputs over 256 KiB to the persisted-output file, not into the database', async () => {
    const runtime = files.open()
    const persistDir = join(files.dir(), 'persist')
    const agent = createAgent({ provider: scriptedProvider([{ toolCalls: [{ name: 'dump', id: 'call_big', input: {} }] }, { text: 'ok' }]), tools: [big], durable: runtime, sessionId: 'big', behavior: { persistDir } })
    await agent.run({ prompt: 'dump it' })
    const path = join(persistDir, 'big', 'tool-results', 'call_big.txt')
    expect(existsSync(path)).toBe(true)
    expect(readFileSync(path, 'utf8')).toHaveLength(300 * 1024)
    runtime.close()
    const db = new DatabaseSync(files.dbPath())
    const largest = db.prepare('SELECT MAX(LENGTH(turn)) AS size FROM turns').get() as { size: number }
    db.close()
    expect(largest.size).toBeLessThan(20_000)
  })

  it('heals instead of resuming when the history was rewritten: resume:mismatch fires and resume() resolves null', async () => {
    const first = files.open()
    let release: (() => void) | undefined
    const blocking: ToolDef = { spec: { name: 'block', description: 'Blocks', inputSchema: { type: 'object', properties: {} } }, execute: () => new Promise(resolve => { release = () => resolve('late') }) }
    const agent = createAgent({ provider: scriptedProvider([{ toolCalls: [{ name: 'block', id: 'call_block', input: {} }] }, { text: 'done' }]), tools: [blocking], durable: first, sessionId: 'rewritten' })
    const running = agent.run({ prompt: 'go' }).catch((error: unknown) => error)
    while (!release) await new Promise(resolve => setImmediate(resolve)) // the call is running
    first.abandon()
    release()
    expect(await running).toMatchObject({ code: 'sqlite_closed' })
    const editor = files.open()
    await editor.stores.session.appendTurns('rewritten', [{ id: 'foreign-1', runId: 'run_other', role: 'user', content: [{ type: 'text', text: 'edited elsewhere' }], createdAt: 1 }])
    editor.close()
    const second = files.open()
    const reasons: string[] = []
    const resumer = createAgent({ provider: scriptedProvider([]), tools: [blocking], durable: second, sessionId: 'rewritten', hooks: { 'resume:mismatch': event => { reasons.push(event.reason) } } })
    expect(await resumer.resume()).toBeNull()
    expect(reasons).toEqual(['turn foreign-1 of another run follows the run\'s checkpoint'])
    expect(await second.recoverInterruptedRuns()).toEqual([])
  })

  it('delivers steering messages saved during a run once, after the run ends', async () => {
    const runtime = files.open()
    const provider = scriptedProvider(request => ({ text: `seen: ${JSON.stringify(request.messages.at(-1)?.content)}` }))
    const agent = createAgent({ provider, durable: runtime, sessionId: 'steer' })
    const other = files.open()
    agent.hooks.hook('model:request', async () => { if (provider.requests.length === 0) await other.steer('steer', 'also do B') })
    await agent.run({ prompt: 'do A' })
    const delivered = await deliverSteering(agent, runtime)
    expect(delivered).toHaveLength(1)
    expect(delivered[0]?.text).toContain('also do B')
    expect(await deliverSteering(agent, runtime)).toEqual([])
  })

  it('runs a 20-turn tool loop to completion (its cost per turn is measured in npm run bench)', async () => {
    const turns = 20
    const echo: ToolDef = { spec: { name: 'echo', description: 'Echo', inputSchema: { type: 'object', properties: {} } }, execute: async () => 'ok' }
    const script = Array.from({ length: turns - 1 }, (_unused, index) => ({ toolCalls: [{ name: 'echo', id: `call_${index}`, input: {} }] }))
    const runtime = files.open()
    const agent = createAgent({ provider: scriptedProvider([...script, { text: 'end' }]), tools: [echo], durable: runtime, sessionId: 'bench' })
    const stats = await agent.run({ prompt: 'go' })
    expect(stats.turns).toBe(turns)
  })
})

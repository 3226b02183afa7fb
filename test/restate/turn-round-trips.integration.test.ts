import * as restate from '@restatedev/restate-sdk'
import { RestatePromise } from '@restatedev/restate-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent } from '../../src/agent/create-agent'
import { createSession, loadSession } from '../../src/session/session'
import { scriptedProvider } from '../../src/testing/index'
import type { ToolDef } from '../../src/tools/tool'
import { restateRuntime } from '../../src/restate/index'
import type { RestateHarness } from '../helpers/restate/restate-harness'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'

const executions = new Map<string, number>()
const failedOnce = new Set<string>()
const requests = new Map<string, string[][]>()

function counted(key: string, name: string): void {
  executions.set(`${key}:${name}`, (executions.get(`${key}:${name}`) ?? 0) + 1)
}

/** Tools of the probe: `look` may run again (`replay: 'safe'`), `write` may not (the default). */
function probeTools(key: string): ToolDef[] {
  return [
    { spec: { name: 'look', description: 'Look.', inputSchema: { type: 'object' } }, replay: 'safe', isConcurrencySafe: true, execute: async input => { counted(key, `look ${String(input.at)}`); return `saw ${String(input.at)}` } },
    { spec: { name: 'write', description: 'Write.', inputSchema: { type: 'object' } }, execute: async () => { counted(key, 'write'); return 'wrote' } },
  ]
}

/**
 * Turn 1 asks for two safe calls, turn 2 for one unsafe call, turn 3 answers. The handler fails once after the run,
 * so the next attempt replays all of it from the journal.
 */
const turnProbe = restate.object({
  name: 'TurnProbe',
  handlers: {
    run: async (ctx: restate.ObjectContext, options: { deferSafeCalls: boolean }): Promise<{ text: string; turns: string[]; results: string[] }> => {
      const key = ctx.key
      const durable = restateRuntime(ctx, { promises: RestatePromise, idSeed: key, deferSafeCalls: options.deferSafeCalls })
      const session = await createSession({ id: key, store: durable.stores.session, clock: { now: () => durable.now() } })
      const provider = scriptedProvider(request => {
        const results = request.messages.flatMap(message => message.content.filter(block => block.type === 'tool_result'))
        if (results.length === 0) return { toolCalls: [{ name: 'look', input: { at: 'a' } }, { name: 'look', input: { at: 'b' } }] }
        if (results.length === 2) {
          requests.set(key, [...(requests.get(key) ?? []), results.map(block => String(block.content))])
          return { toolCalls: [{ name: 'write', input: {} }] }
        }
        return { text: 'done' }
      })
      const stats = await createAgent({ provider, tools: probeTools(key), durable, session }).run({ prompt: 'look, then write' })
      if (!failedOnce.has(key)) {
        failedOnce.add(key)
        throw new Error('replay me')
      }
      const stored = await loadSession(durable.stores.session, key)
      const turns = stored?.turns ?? []
      const results = turns.flatMap(turn => turn.content.filter(block => block.type === 'tool_result').map(block => String(block.content)))
      return { text: stats.text, turns: turns.map(turn => turn.id.replace(/^run_[^-]+/, 'run')), results }
    },
  },
})

describe.each(REPLAY_MODES)('a turn of safe calls on a real server ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => { harness = await startRestateHarness({ services: [turnProbe], alwaysReplay }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  const runCommands = async (key: string): Promise<string[]> => {
    const rows = await h().query<{ name: string }>(`SELECT j.name FROM sys_journal j JOIN sys_invocation i ON j.id = i.id WHERE i.target = 'TurnProbe/${key}/run' AND j.entry_type = 'Command: Run' ORDER BY j.index`)
    return rows.map(row => row.name.replace(/^run_[^/]+/, 'run')).filter(name => name !== '')
  }

  it('journals the safe calls with the next model step, and the unsafe call with no intent: one Run per turn', async () => {
    const key = `deferred-${alwaysReplay}`
    const response = await h().call<{ text: string; turns: string[]; results: string[] }>(`TurnProbe/${key}/run`, { deferSafeCalls: true })
    expect(response.status).toBe(200)
    expect(response.body.text).toBe('done')
    expect(response.body.turns).toEqual(['run-u', 'run-t1-a', 'run-t1-r', 'run-t2-a', 'run-t2-r', 'run-t3-a'])
    expect(response.body.results).toEqual(['saw a', 'saw b', 'wrote'])
    // Each tool ran once, across the replay of every attempt (always-replay: one attempt per journaled step).
    expect([executions.get(`${key}:look a`), executions.get(`${key}:look b`), executions.get(`${key}:write`)]).toEqual([1, 1, 1])
    // The model step of turn 2 ran the calls first and sent their results.
    expect(requests.get(key)?.at(-1)).toEqual(['saw a', 'saw b'])
    const names = await runCommands(key)
    expect(names.filter(name => name.endsWith('/model'))).toEqual(['run/t1/model', 'run/t2/model', 'run/t3/model'])
    expect(names.filter(name => name.endsWith('/tool'))).toHaveLength(1)
    expect(names.filter(name => name.startsWith('intent:'))).toEqual([])
  })

  it('without deferral, each safe call is a step of its own (two more round trips)', async () => {
    const key = `steps-${alwaysReplay}`
    const response = await h().call<{ text: string; results: string[] }>(`TurnProbe/${key}/run`, { deferSafeCalls: false })
    expect(response.status).toBe(200)
    expect(response.body.results).toEqual(['saw a', 'saw b', 'wrote'])
    const names = await runCommands(key)
    expect(names.filter(name => name.endsWith('/tool'))).toHaveLength(3)
    expect(names.filter(name => name.startsWith('intent:'))).toEqual([])
  })
})

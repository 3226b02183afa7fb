import { DatabaseSync, StatementSync } from 'node:sqlite'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { createAgent } from 'zidane'
import { stepKey } from 'zidane/durable'
import { scriptedProvider } from 'zidane/testing'
import { useTempFiles } from './sqlite-test-helpers'

/**
 * Counts the queries (`get`/`all`, pragmas apart) the runtime runs while `counting()` is true: spies that call
 * through and keep each call's statement.
 */
function countQueries(counting: () => boolean): { queries: string[] } {
  const counted = { queries: [] as string[] }
  for (const method of ['get', 'all'] as const) {
    const original = Reflect.get(StatementSync.prototype, method) as (this: StatementSync, ...args: unknown[]) => unknown
    vi.spyOn(StatementSync.prototype, method).mockImplementation(function (this: StatementSync, ...args) {
      if (counting() && !this.sourceSQL.startsWith('PRAGMA')) counted.queries.push(this.sourceSQL)
      return original.apply(this, args) as never
    })
  }
  return counted
}

describe('SQLite runtime: facts kept until another connection writes', () => {
  const files = useTempFiles()
  afterEach(() => { vi.restoreAllMocks() })

  it('runs the turns of a run without a query when nothing else writes the file', async () => {
    let counting = false
    const counted = countQueries(() => counting)
    const turns = [...Array.from({ length: 6 }, (_unused, turn) => ({ toolCalls: [{ name: 'echo', id: `call_${turn}`, input: {} }] })), { text: 'done' }]
    const agent = createAgent({
      provider: scriptedProvider(turns),
      tools: [{ spec: { name: 'echo', description: 'Echo', inputSchema: { type: 'object', properties: {} } }, execute: async () => 'echo' }],
      durable: files.open(),
      sessionId: 's1',
      hooks: { 'turn:start': event => { if (event.turn === 2) counting = true }, 'turn:end': event => { if (event.turn === 6) counting = false } },
    })
    expect((await agent.run({ prompt: 'go' })).status).toBe('completed')
    // Ownership, session fencing, steering and step lookups were read once at the run's start and kept.
    expect(counted.queries).toEqual([])
  })

  it('notices a takeover committed by another process after the run\'s ownership was kept', async () => {
    const runtime = files.open()
    await runtime.runs.claim('s1', 'run_a')
    expect(await runtime.step(stepKey('run_a', 'model', 't1'), async () => 'first')).toBe('first')
    const other = new DatabaseSync(files.dbPath())
    other.prepare("UPDATE runs SET owner = 'another-process' WHERE run_id = 'run_a'").run()
    other.close()
    let ran = false
    await expect(runtime.step(stepKey('run_a', 'model', 't2'), async () => { ran = true; return 'second' })).rejects.toThrow('this run continued in another process')
    expect(ran).toBe(false)
  })

  it('hands a message another process steered to the next turn of a run that found the session quiet', async () => {
    const runtime = files.open()
    const steerer = files.open()
    await runtime.runs.claim('s1', 'run_a')
    expect(await runtime.steering.take({ sessionId: 's1', runId: 'run_a', turn: 1 })).toEqual([])
    expect(await runtime.steering.take({ sessionId: 's1', runId: 'run_a', turn: 2 })).toEqual([])
    await steerer.steer('s1', 'also the README')
    expect((await runtime.steering.take({ sessionId: 's1', runId: 'run_a', turn: 3 })).map(message => message.text)).toEqual(['also the README'])
  })

  it('hands a message this runtime steered to the next turn of a run that found the session quiet', async () => {
    const runtime = files.open()
    await runtime.runs.claim('s1', 'run_a')
    expect(await runtime.steering.take({ sessionId: 's1', runId: 'run_a', turn: 1 })).toEqual([])
    await runtime.steer('s1', 'stop after this')
    expect((await runtime.steering.take({ sessionId: 's1', runId: 'run_a', turn: 2 })).map(message => message.text)).toEqual(['stop after this'])
  })

  it('replays a step recorded by an earlier attempt of a run claimed again (its lookups are not skipped)', async () => {
    const first = files.open()
    await first.runs.claim('s1', 'run_a')
    await first.step(stepKey('run_a', 'model', 't1'), async () => 'recorded')
    first.abandon()
    const second = files.open()
    await second.runs.claim('s1', 'run_a', { takeOver: true })
    expect(await second.step(stepKey('run_a', 'model', 't1'), async () => 'again')).toBe('recorded')
  })
})

import { statSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { stepKey } from 'zidane/durable'
import { scriptedProvider } from 'zidane/testing'
import type { ScriptedTurn } from 'zidane/testing'
import { useTempFiles } from './sqlite-test-helpers'

const echo = (replay: 'safe' | 'unsafe'): ToolDef => ({
  spec: { name: 'echo', description: 'Echo', inputSchema: { type: 'object', properties: { turn: { type: 'number' } } } },
  ...(replay === 'safe' ? { replay: 'safe' as const } : {}),
  execute: async input => `echo ${String(input.turn)}`,
})

const TOOL_TURNS = 10
const script = (calls: number): ScriptedTurn[] => [
  ...Array.from({ length: TOOL_TURNS }, (_unused, turn) => ({ toolCalls: Array.from({ length: calls }, (_none, call) => ({ name: 'echo', id: `call_${turn}_${call}`, input: { turn } })) })),
  { text: 'done' },
]

describe('SQLite runtime: commits per turn', () => {
  const files = useTempFiles()

  /** Runs the script and counts the commits made from the run's first model step to its last (set-up and release excluded). */
  const countCommits = async (options: { replay: 'safe' | 'unsafe'; calls: number; foldToolResults?: boolean }): Promise<{ durable: number; light: number; turns: number }> => {
    const counted = { durable: 0, light: 0 }
    let counting = false
    const runtime = files.open({ onCommit: strength => { if (counting) counted[strength] += 1 }, ...(options.foldToolResults === undefined ? {} : { foldToolResults: options.foldToolResults }) })
    const agent = createAgent({
      provider: scriptedProvider(script(options.calls)),
      tools: [echo(options.replay)],
      durable: runtime,
      sessionId: `s-${options.replay}-${options.calls}-${String(options.foldToolResults)}`,
      hooks: { 'turn:start': event => { if (event.turn === 2) counting = true }, 'turn:end': event => { if (event.turn === TOOL_TURNS + 1) counting = false } },
    })
    const stats = await agent.run({ prompt: 'go' })
    expect(stats.status).toBe('completed')
    // Counted: turns 2..11, each a model step plus (for turns 2..10) its tool calls.
    return { ...counted, turns: TOOL_TURNS }
  }

  it('makes one synced commit per turn with an unsafe tool call (tool results fold into the next model step)', async () => {
    const { durable, light, turns } = await countCommits({ replay: 'unsafe', calls: 1 })
    expect(durable / turns).toBe(1)
    // The model's turn that asked for the call reaches the file with the model step (`StepOptions.sessionTurns`),
    // before the call's effect: no commit of its own.
    expect(light).toBe(0)
  })

  it('makes one synced commit per turn with three concurrent safe calls', async () => {
    const { durable, turns } = await countCommits({ replay: 'safe', calls: 3 })
    expect(durable / turns).toBe(1)
  })

  it('commits each tool result on its own when the fold is off (the old behaviour: two synced commits per turn)', async () => {
    const { durable, turns } = await countCommits({ replay: 'unsafe', calls: 1, foldToolResults: false })
    expect(durable / turns).toBeCloseTo(1.9, 1)
  })

  it('appends at most 4.5 WAL pages per turn (one transaction: a step touches one b-tree, a turn two)', async () => {
    const runtime = files.open()
    const walBytes = (): number => statSync(`${files.dbPath()}-wal`).size
    let from = 0
    let to = 0
    const agent = createAgent({
      provider: scriptedProvider(script(1)),
      tools: [echo('unsafe')],
      durable: runtime,
      sessionId: 's-wal',
      hooks: { 'turn:start': event => { if (event.turn === 2) from = walBytes() }, 'turn:end': event => { if (event.turn === TOOL_TURNS + 1) to = walBytes() } },
    })
    expect((await agent.run({ prompt: 'go' })).status).toBe('completed')
    // A WAL frame is a 24-byte header and a 4 KiB page; 10 turns stay far below the 1000-page autocheckpoint.
    const pagesPerTurn = (to - from) / (24 + 4096) / TOOL_TURNS
    expect(pagesPerTurn).toBeGreaterThan(0)
    // 5.6 when the model's turn had a commit of its own (its pages written twice), 3.8 with it in the model step's.
    expect(pagesPerTurn).toBeLessThanOrEqual(4.5)
  })

  it('syncs folded results before a suspend, also when an unsynced commit already carried them', async () => {
    const commits: string[] = []
    const runtime = files.open({ onCommit: strength => { commits.push(strength) } })
    await runtime.runs.claim('s1', 'run_a')
    await runtime.step(stepKey('run_a', 'tool', 't1', 'first'), async () => 'folded')
    commits.length = 0
    // The second call's pre-effect commit carries the first result unsynced; the call is then stopped by the suspend.
    await expect(runtime.step(stepKey('run_a', 'tool', 't1', 'second'), async () => { throw new Error('suspending') }, { atMostOnce: true })).rejects.toThrow('suspending')
    await runtime.runs.markSuspended('s1', 'run_a')
    expect(commits).toEqual(['light', 'durable'])
  })
})

import { describe, expect, it } from 'vitest'
import { MAX_UNCOUNTED_TURNS } from '../../../src/restate/session'
import type { SessionChanges } from '../../../contract/event-log'
import type { SessionView } from '../../../contract/session'
import type { RecordedRequest, ScriptedResponse } from '../../../support/anthropic-server'
import { useHeldModelStack } from '../../helpers/restate/held-model-stack'
import type { RestateHarness } from '../../helpers/restate/restate-harness'

const todo = { type: 'tool_use' as const, name: 'todowrite', input: { todos: [{ content: 'one', status: 'pending' }] } }

const spawns = (count: number) => Array.from({ length: count }, () => ({ type: 'tool_use' as const, name: 'spawn', input: { task: 'child task' } }))

/** The text of the request's first user message: which test's session it is. */
function firstPrompt(request: RecordedRequest): string {
  const [first] = (request.body?.messages ?? []) as Array<{ content: string | Array<{ text?: string }> }>
  return typeof first?.content === 'string' ? first.content : first?.content[0]?.text ?? ''
}

function assistantTurns(request: RecordedRequest): number {
  return ((request.body?.messages ?? []) as Array<{ role: string }>).filter(message => message.role === 'assistant').length
}

/**
 * A running session's newest turns are past its header's counter (the header is written once per run): the view reads
 * them on from it. A page of older turns must hold those turns only, and the turns past the counter stay few.
 */
describe('the session view of a running session', () => {
  /** Calls the tool `toolTurns` times, then waits for the test's end. */
  const toolsThenWait = async (request: RecordedRequest, toolTurns: number, held: Promise<void>): Promise<ScriptedResponse> => {
    if (assistantTurns(request) < toolTurns) return { kind: 'message', content: [todo] }
    await held
    return { kind: 'message', content: [{ type: 'text', text: 'done' }] }
  }
  const stack = useHeldModelStack('session-view', {
    script: async (request, held) => {
      const prompt = firstPrompt(request)
      if (prompt === 'first') return assistantTurns(request) === 0 ? { kind: 'message', content: [{ type: 'text', text: 'ok' }] } : toolsThenWait(request, 3, held)
      if (prompt === 'child task') return { kind: 'message', content: [{ type: 'text', text: 'ok' }] }
      // Three turns of 8 sub-agents and one of a single one (25 run records after the parent's), then 2 tool turns.
      if (prompt === 'spawns' && assistantTurns(request) < 4) return { kind: 'message', content: spawns(assistantTurns(request) < 3 ? 8 : 1) }
      if (prompt === 'spawns') return toolsThenWait(request, 6, held)
      return toolsThenWait(request, 20, held)
    },
  })
  const h = (): RestateHarness => stack.harness()
  const view = async (key: string, request: { turnsAfter?: number; limit?: number }): Promise<SessionView> => (await h().call<SessionView>(`session/${key}/get`, request)).body

  it('hold in an older page only its turns, not some of the turns past the counter', async () => {
    const key = 't1~view'
    await h().call(`session/${key}/run`, { prompt: 'first' })
    await h().send(`session/${key}/run`, { prompt: 'second' })
    const newest = await h().waitFor(async () => {
      const read = await view(key, {})
      return read.counts.turns >= 7 ? read : undefined
    }, 20_000, 'the second results turn in the view')
    expect(newest.turns.map(turn => turn.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user'])
    const oldest = await view(key, { turnsAfter: 0, limit: 2 })
    expect(oldest.turns.map(turn => turn.id)).toEqual(newest.turns.slice(0, 2).map(turn => turn.id))
    expect(oldest.page).toMatchObject({ from: 0, to: 2, total: 7 })
    const middle = await view(key, { turnsAfter: 2, limit: 3 })
    expect(middle.turns.map(turn => turn.id)).toEqual(newest.turns.slice(2, 5).map(turn => turn.id))
  }, 60_000)

  it('count a long run\'s turns in its header as it goes: a view reads few keys past the counter, whatever the run\'s length', async () => {
    const key = 't1~long'
    await h().send(`session/${key}/run`, { prompt: 'long' })
    await h().waitFor(async () => ((await view(key, {})).counts.turns >= 41 ? true : undefined), 30_000, 'the twentieth results turn in the view')
    // `changes` counts the header's turns (or those it read, one here): how far the header's counter is behind.
    const changes = (await h().call<SessionChanges>(`session/${key}/changes`, { runsFrom: 0, runs: 1, turnsFrom: 0, newFrom: 0, turns: 1 })).body
    expect(changes.turnCount).toBeGreaterThanOrEqual(41 - MAX_UNCOUNTED_TURNS)
  }, 60_000)

  it('hold the running run\'s newest turns when its sub-agents\' records fill the runs the view lists', async () => {
    const key = 't1~spawns'
    await h().send(`session/${key}/run`, { prompt: 'spawns' })
    await h().waitFor(async () => (stack.model().requests.filter(request => firstPrompt(request) === 'spawns').length >= 7 ? true : undefined), 60_000, 'the seventh model call of the parent')
    // Every turn key the session holds (the sub-agents' turns are merged into it), read to the first missing one.
    const stored = (await h().call<SessionChanges>(`session/${key}/changes`, { runsFrom: 0, runs: 1, turnsFrom: 0, newFrom: 0, turns: 200 })).body.turns
    const read = await view(key, {})
    expect(read.runs.every(run => run.label !== undefined)).toBe(true)
    expect(read.counts.turns).toBe(stored.length)
    expect(read.turns.at(-1)?.id).toBe(stored.at(-1)?.id)
  }, 120_000)
})

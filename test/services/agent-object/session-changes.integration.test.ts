import { describe, expect, it } from 'vitest'
import type { SessionChanges } from '../../../contract/event-log'
import { useHeldModelStack } from '../../helpers/restate/held-model-stack'

const KEY = 't1~changes'

/**
 * A running session writes its header once per run, so its turns are stored before the header counts them. The
 * shared `changes` counts what it read: the event log's sync, rung with the session's counts, must not take the state
 * for one its write has not reached (it would read again every 5 ms, up to 20 times, for every ring).
 */
describe('the session\'s changes while a run is between boundaries', () => {
  const stack = useHeldModelStack('session-changes', { firstAnswer: [{ type: 'tool_use', name: 'todowrite', input: { todos: [{ content: 'one', status: 'pending' }] } }] })

  it('counts the turns it read past the header', async () => {
    const h = stack.harness()
    await h.send(`session/${KEY}/run`, { prompt: 'note one thing' })
    await h.waitFor(async () => (stack.model().requests.length >= 2 ? true : undefined), 20_000, 'the second model call')
    const changes = await h.waitFor(async () => {
      const read = (await h.call<SessionChanges>(`session/${KEY}/changes`, { runsFrom: 0, runs: 1, turnsFrom: 0, newFrom: 0, turns: 10 })).body
      return read.turns.length >= 3 ? read : undefined
    }, 10_000, 'the results turn in the state')
    expect(changes.turns.map(turn => turn.role)).toEqual(['user', 'assistant', 'user'])
    expect(changes.turnCount).toBe(3)
    expect(changes.runCount).toBe(1)
    stack.release()
  }, 60_000)
})

import { describe, expect, it } from 'vitest'
import type { ReadEventsResult, SyncEventsResult, WatchResult } from '../../../contract/event-log'
import { useHeldModelStack } from '../../helpers/restate/held-model-stack'
import { readEventsUntil } from '../../helpers/restate/session-services'

const KEY = 't1~turn-events'

/**
 * A turn's durable events reach a followed log while the run is already on its next model call: the model server
 * holds the second call until the test has read the log. Nothing of the run is journaled between the two calls but
 * state writes, so the events can only come from the log reading the session's state when the doorbell rings.
 */
describe('durable events of a turn', () => {
  const stack = useHeldModelStack('turn-events', {
    doorbell: true,
    firstAnswer: [{ type: 'text', text: 'noting it' }, { type: 'tool_use', name: 'todowrite', input: { todos: [{ content: 'one', status: 'pending' }] } }],
  })

  it('are in the log before the next turn\'s model call returns', async () => {
    const h = stack.harness()
    // A viewer follows the session, as the gateway does for its SSE viewers: the doorbell hurries only a followed log.
    const watching = h.call<WatchResult>('event_watch/wait', { key: KEY, after: 0, timeoutMs: 30_000 })
    await h.waitFor(async () => ((await h.call<SyncEventsResult>(`events/${KEY}/sync`, {})).body.watched ? true : undefined), 5_000, 'the watch to subscribe')
    await h.send(`session/${KEY}/run`, { prompt: 'note one thing' })
    await h.waitFor(async () => (stack.model().requests.length >= 2 ? true : undefined), 20_000, 'the second model call')
    // The doorbell syncs within its window (25 ms); 3 s leaves room for a slow machine.
    const log = await h.waitFor(async () => {
      const read = await h.call<ReadEventsResult>(`events/${KEY}/read`, { after: 0 })
      return read.body.events.some(event => event.type === 'turn:end') ? read.body.events : undefined
    }, 3_000, 'the first turn\'s events while the second model call is held')
    expect(log.map(event => event.type)).toEqual(['run:start', 'tool:start', 'tool:end', 'turn:end'])
    expect(stack.model().requests).toHaveLength(2) // the second call is still held
    expect((await watching).body.count).toBeGreaterThan(0) // the viewer was woken
    stack.release()
    const done = await readEventsUntil(h, KEY, events => events.some(event => event.type === 'run:end'))
    expect(done.map(event => event.type)).toEqual(['run:start', 'tool:start', 'tool:end', 'turn:end', 'turn:end', 'run:end'])
  }, 60_000)
})

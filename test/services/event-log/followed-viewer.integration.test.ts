import { describe, expect, it } from 'vitest'
import type { ReadEventsResult, WatchResult } from '../../../contract/event-log'
import type { RecordedRequest, ScriptedResponse } from '../../../support/anthropic-server'
import { useHeldModelStack } from '../../helpers/restate/held-model-stack'

const KEY = 't1~followed-viewer'

/** A held step of the model script: resolves when the test lets the model answer. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open: () => void = () => undefined
  const opened = new Promise<void>(resolve => { open = resolve })
  return { opened, open }
}

/**
 * A viewer arrives while a session runs, after the doorbell learnt from a sync that nobody followed its log: the
 * doorbell then asks again only every 5 s. A viewer that follows the session's live deltas through the services
 * (every stream of the gateway does) is seen by the doorbell at once, in the live hub, so the run's next turn reaches
 * the log within the doorbell's 25 ms window, not 5 s later.
 */
describe('a viewer who arrives mid-run and follows the live deltas', () => {
  let viewer = false
  const second = gate()
  const third = gate()
  const toolTurn = (text: string): ScriptedResponse => ({ kind: 'message', content: [{ type: 'text', text }, { type: 'tool_use', name: 'todowrite', input: { todos: [{ content: text, status: 'pending' }] } }] })
  const stack = useHeldModelStack('followed-viewer', {
    doorbell: true,
    followed: logKey => viewer && logKey === KEY,
    script: async (request: RecordedRequest) => {
      const turns = ((request.body?.messages ?? []) as Array<{ role: string }>).filter(message => message.role === 'assistant').length
      if (turns === 1) await second.opened
      if (turns === 2) await third.opened
      return turns < 2 ? toolTurn(`step ${turns}`) : { kind: 'message', content: [{ type: 'text', text: 'done' }] }
    },
  })

  it('gets the next turn\'s events within the short window', async () => {
    const h = stack.harness()
    await h.send(`session/${KEY}/run`, { prompt: 'two steps' })
    // The first turn's writes were rung while nobody followed: the doorbell now believes the log unfollowed.
    await h.waitFor(async () => (stack.model().requests.length >= 2 ? true : undefined), 20_000, 'the second model call')
    await new Promise(resolve => setTimeout(resolve, 300))
    // The viewer comes: the gateway's durable watch (which brings the log up to date) and its live subscription.
    viewer = true
    const watched = (await h.call<WatchResult>('event_watch/wait', { key: KEY, after: 0, timeoutMs: 10_000 })).body.count
    expect(watched).toBeGreaterThan(0) // its subscription synced the log: the first turn is in it
    await new Promise(resolve => setTimeout(resolve, 300))
    const settled = (await h.call<ReadEventsResult>(`events/${KEY}/read`, { after: 0, limit: 1 })).body.count
    // The second turn: its writes ring, and the run waits in its third model call (no journaled sync yet).
    const releasedMs = performance.now()
    second.open()
    await h.waitFor(async () => (stack.model().requests.length >= 3 ? true : undefined), 20_000, 'the third model call')
    await h.waitFor(async () => {
      const { events } = (await h.call<ReadEventsResult>(`events/${KEY}/read`, { after: settled })).body
      return events.some(event => event.type === 'turn:end') ? true : undefined
    }, 10_000, 'the second turn\'s events')
    // 5 s would be the unfollowed window; 2 s leaves room for a slow machine.
    expect(performance.now() - releasedMs).toBeLessThan(2_000)
    third.open()
  }, 90_000)
})

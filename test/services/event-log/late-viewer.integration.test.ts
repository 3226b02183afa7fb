import { describe, expect, it } from 'vitest'
import type { WatchResult } from '../../../contract/event-log'
import { useHeldModelStack } from '../../helpers/restate/held-model-stack'

const KEY = 't1~late-viewer'

/**
 * A viewer who starts following a session after its run's start was rung (nobody followed the log then, so that ring
 * synced nothing) gets the run's start while the run is still in its first model call. Nothing of the run is written
 * while the model streams, so no later ring comes: the viewer's own subscription must bring the log up to date. The
 * chat page hit this: the page follows right after its prompt starts the run, and when it lost the race its live text
 * waited, unplaced, for the run's start until the model's whole answer had streamed.
 */
describe('a viewer who arrives after the run started', () => {
  const stack = useHeldModelStack('late-viewer', { doorbell: true })

  it('is woken with the run\'s start while the first model call is still held', async () => {
    const h = stack.harness()
    await h.send(`session/${KEY}/run`, { prompt: 'take your time' })
    await h.waitFor(async () => (stack.model().requests.length >= 1 ? true : undefined), 20_000, 'the first model call')
    await stack.doorbell?.idle() // the run start's ring has synced (or been turned away: nobody followed)
    const watched = await h.call<WatchResult>('event_watch/wait', { key: KEY, after: 0, timeoutMs: 5_000 })
    expect(stack.model().requests).toHaveLength(1) // the model call is still held: no later write rang
    expect(watched.body.count).toBeGreaterThan(0) // not the timeout's null
    expect(watched.body.events?.map(event => event.type)).toEqual(['run:start']) // carried by the wake: no read
    stack.release()
  }, 60_000)
})

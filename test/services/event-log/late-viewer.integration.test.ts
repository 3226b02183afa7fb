import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { start as startModelServer } from '../../../support/anthropic-server'
import type { WatchResult } from '../../../contract/event-log'
import type { FakeAnthropicServer } from '../../../support/anthropic-server'
import { printLogsOnFailure, startRestateHarness } from '../../helpers/restate/restate-harness'
import { lateDoorbell, loadSessionServices } from '../../helpers/restate/session-services'
import type { RestateHarness } from '../../helpers/restate/restate-harness'

const MODEL_ENV = { ANTHROPIC_API_KEY: 'sk-ant-late-viewer', ZIDANE_MODEL: 'claude-test' }
const KEY = 't1~late-viewer'

/**
 * A viewer who starts following a session after its run's start was rung (nobody followed the log then, so that ring
 * synced nothing) gets the run's start while the run is still in its first model call. Nothing of the run is written
 * while the model streams, so no later ring comes: the viewer's own subscription must bring the log up to date. The
 * chat page hit this: the page follows right after its prompt starts the run, and when it lost the race its live text
 * waited, unplaced, for the run's start until the model's whole answer had streamed.
 */
describe('a viewer who arrives after the run started', () => {
  let harness: RestateHarness | undefined
  let model: FakeAnthropicServer | undefined
  let release: () => void = () => undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  const bell = lateDoorbell()
  beforeAll(async () => {
    model = await startModelServer({ apiKey: MODEL_ENV.ANTHROPIC_API_KEY })
    const held = new Promise<void>((resolve) => { release = resolve })
    model.setHandler(async () => {
      await held
      return { kind: 'message', content: [{ type: 'text', text: 'done' }] }
    })
    Object.assign(process.env, MODEL_ENV, { ANTHROPIC_BASE_URL: model.url })
    harness = await startRestateHarness({ services: loadSessionServices({}, { doorbell: bell.doorbell }) })
    bell.connect(h().ingressUrl)
  })
  afterAll(async () => {
    release()
    for (const name of [...Object.keys(MODEL_ENV), 'ANTHROPIC_BASE_URL']) Reflect.deleteProperty(process.env, name)
    await harness?.stop()
    await model?.close()
  })
  printLogsOnFailure(() => harness)

  it('is woken with the run\'s start while the first model call is still held', async () => {
    await h().send(`session/${KEY}/run`, { prompt: 'take your time' })
    await h().waitFor(async () => ((model?.requests.length ?? 0) >= 1 ? true : undefined), 20_000, 'the first model call')
    await bell.doorbell.idle() // the run start's ring has synced (or been turned away: nobody followed)
    const watched = await h().call<WatchResult>('event_watch/wait', { key: KEY, after: 0, timeoutMs: 5_000 })
    expect(model?.requests).toHaveLength(1) // the model call is still held: no later write rang
    expect(watched.body.count).toBeGreaterThan(0) // not the timeout's null
    expect(watched.body.events?.map(event => event.type)).toEqual(['run:start']) // carried by the wake: no read
    release()
  }, 60_000)
})

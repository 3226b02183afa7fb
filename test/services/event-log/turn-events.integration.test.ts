import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { start as startModelServer } from '../../../support/anthropic-server'
import type { ReadEventsResult, SyncEventsResult, WatchResult } from '../../../contract/event-log'
import type { FakeAnthropicServer } from '../../../support/anthropic-server'
import { printLogsOnFailure, startRestateHarness } from '../../helpers/restate/restate-harness'
import { lateDoorbell, loadSessionServices, readEventsUntil } from '../../helpers/restate/session-services'
import type { RestateHarness } from '../../helpers/restate/restate-harness'

const MODEL_ENV = { ANTHROPIC_API_KEY: 'sk-ant-turn-events', ZIDANE_MODEL: 'claude-test' }

/**
 * A turn's durable events reach a followed log while the run is already on its next model call: the model server
 * holds the second call until the test has read the log. Nothing of the run is journaled between the two calls but
 * state writes, so the events can only come from the log reading the session's state when the doorbell rings.
 */
describe('durable events of a turn', () => {
  let harness: RestateHarness | undefined
  let model: FakeAnthropicServer | undefined
  let release: () => void = () => undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => {
    model = await startModelServer({ apiKey: MODEL_ENV.ANTHROPIC_API_KEY })
    const held = new Promise<void>((resolve) => { release = resolve })
    model.setHandler(async (request) => {
      const assistantTurns = ((request.body?.messages ?? []) as Array<{ role: string }>).filter(message => message.role === 'assistant').length
      if (assistantTurns === 0) return { kind: 'message', content: [{ type: 'text', text: 'noting it' }, { type: 'tool_use', name: 'todowrite', input: { todos: [{ content: 'one', status: 'pending' }] } }] }
      await held
      return { kind: 'message', content: [{ type: 'text', text: 'done' }] }
    })
    Object.assign(process.env, MODEL_ENV, { ANTHROPIC_BASE_URL: model.url })
    const bell = lateDoorbell()
    harness = await startRestateHarness({ services: loadSessionServices({}, { doorbell: bell.doorbell }) })
    bell.connect(harness.ingressUrl)
  })
  afterAll(async () => {
    release()
    for (const name of [...Object.keys(MODEL_ENV), 'ANTHROPIC_BASE_URL']) Reflect.deleteProperty(process.env, name)
    await harness?.stop()
    await model?.close()
  })
  printLogsOnFailure(() => harness)

  it('are in the log before the next turn\'s model call returns', async () => {
    // A viewer follows the session, as the gateway does for its SSE viewers: the doorbell hurries only a followed log.
    const watching = h().call<WatchResult>('event_watch/wait', { key: 't1~turn-events', after: 0, timeoutMs: 30_000 })
    await h().waitFor(async () => ((await h().call<SyncEventsResult>('events/t1~turn-events/sync', {})).body.watched ? true : undefined), 5_000, 'the watch to subscribe')
    await h().send('session/t1~turn-events/run', { prompt: 'note one thing' })
    await h().waitFor(async () => ((model?.requests.length ?? 0) >= 2 ? true : undefined), 20_000, 'the second model call')
    // The doorbell syncs within its window (25 ms); 3 s leaves room for a slow machine.
    const log = await h().waitFor(async () => {
      const read = await h().call<ReadEventsResult>('events/t1~turn-events/read', { after: 0 })
      return read.body.events.some(event => event.type === 'turn:end') ? read.body.events : undefined
    }, 3_000, 'the first turn\'s events while the second model call is held')
    expect(log.map(event => event.type)).toEqual(['run:start', 'tool:start', 'tool:end', 'turn:end'])
    expect(model?.requests).toHaveLength(2) // the second call is still held
    expect((await watching).body.count).toBeGreaterThan(0) // the viewer was woken
    release()
    const done = await readEventsUntil(h(), 't1~turn-events', events => events.some(event => event.type === 'run:end'))
    expect(done.map(event => event.type)).toEqual(['run:start', 'tool:start', 'tool:end', 'turn:end', 'turn:end', 'run:end'])
  }, 60_000)
})

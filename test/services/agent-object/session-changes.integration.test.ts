import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { start as startModelServer } from '../../../support/anthropic-server'
import type { SessionChanges } from '../../../contract/event-log'
import type { FakeAnthropicServer } from '../../../support/anthropic-server'
import { printLogsOnFailure, startRestateHarness } from '../../helpers/restate/restate-harness'
import { loadSessionServices } from '../../helpers/restate/session-services'
import type { RestateHarness } from '../../helpers/restate/restate-harness'

const MODEL_ENV = { ANTHROPIC_API_KEY: 'sk-ant-session-changes', ZIDANE_MODEL: 'claude-test' }
const KEY = 't1~changes'

/**
 * A running session writes its header once per boundary, so a results turn is stored before the header counts it.
 * The shared `changes` counts what it read: the event log's sync, rung with the session's counts, must not take the
 * state for one its write has not reached (it would read again every 5 ms, up to 20 times, for every ring).
 */
describe('the session\'s changes while a run is between boundaries', () => {
  let harness: RestateHarness | undefined
  let model: FakeAnthropicServer | undefined
  let release: () => void = () => undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => {
    model = await startModelServer({ apiKey: MODEL_ENV.ANTHROPIC_API_KEY })
    const held = new Promise<void>((resolve) => { release = resolve })
    model.setHandler(async (request) => {
      const assistantTurns = ((request.body?.messages ?? []) as Array<{ role: string }>).filter(message => message.role === 'assistant').length
      if (assistantTurns === 0) return { kind: 'message', content: [{ type: 'tool_use', name: 'todowrite', input: { todos: [{ content: 'one', status: 'pending' }] } }] }
      await held
      return { kind: 'message', content: [{ type: 'text', text: 'done' }] }
    })
    Object.assign(process.env, MODEL_ENV, { ANTHROPIC_BASE_URL: model.url })
    harness = await startRestateHarness({ services: loadSessionServices() })
  })
  afterAll(async () => {
    release()
    for (const name of [...Object.keys(MODEL_ENV), 'ANTHROPIC_BASE_URL']) Reflect.deleteProperty(process.env, name)
    await harness?.stop()
    await model?.close()
  })
  printLogsOnFailure(() => harness)

  it('counts the turns it read past the header', async () => {
    await h().send(`session/${KEY}/run`, { prompt: 'note one thing' })
    await h().waitFor(async () => ((model?.requests.length ?? 0) >= 2 ? true : undefined), 20_000, 'the second model call')
    const changes = await h().waitFor(async () => {
      const read = (await h().call<SessionChanges>(`session/${KEY}/changes`, { runsFrom: 0, runs: 1, turnsFrom: 0, newFrom: 0, turns: 10 })).body
      return read.turns.length >= 3 ? read : undefined
    }, 10_000, 'the results turn in the state')
    expect(changes.turns.map(turn => turn.role)).toEqual(['user', 'assistant', 'user'])
    expect(changes.turnCount).toBe(3)
    expect(changes.runCount).toBe(1)
    release()
  }, 60_000)
})

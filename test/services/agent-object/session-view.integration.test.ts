import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { start as startModelServer } from '../../../support/anthropic-server'
import type { SessionView } from '../../../contract/session'
import type { FakeAnthropicServer } from '../../../support/anthropic-server'
import { printLogsOnFailure, startRestateHarness } from '../../helpers/restate/restate-harness'
import { loadSessionServices } from '../../helpers/restate/session-services'
import type { RestateHarness } from '../../helpers/restate/restate-harness'

const MODEL_ENV = { ANTHROPIC_API_KEY: 'sk-ant-session-view', ZIDANE_MODEL: 'claude-test' }
const KEY = 't1~view'
const todo = { type: 'tool_use' as const, name: 'todowrite', input: { todos: [{ content: 'one', status: 'pending' }] } }

/**
 * A running session's newest turns are past its header's counter (the header is written once per run): the view reads
 * them on from it. A page of older turns must hold those turns only, whatever the turns past the counter are.
 */
describe('the session view of a running session', () => {
  let harness: RestateHarness | undefined
  let model: FakeAnthropicServer | undefined
  let release: () => void = () => undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  const view = async (request: { turnsAfter?: number; limit?: number }): Promise<SessionView> => (await h().call<SessionView>(`session/${KEY}/get`, request)).body
  beforeAll(async () => {
    model = await startModelServer({ apiKey: MODEL_ENV.ANTHROPIC_API_KEY })
    const held = new Promise<void>((resolve) => { release = resolve })
    let calls = 0
    model.setHandler(async () => {
      calls += 1
      // The first run answers at once; the second calls a tool twice, then waits.
      if (calls === 1) return { kind: 'message', content: [{ type: 'text', text: 'ok' }] }
      if (calls <= 3) return { kind: 'message', content: [todo] }
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

  it('hold in an older page only its turns, not some of the turns past the counter', async () => {
    await h().call(`session/${KEY}/run`, { prompt: 'first' })
    await h().send(`session/${KEY}/run`, { prompt: 'second' })
    await h().waitFor(async () => ((model?.requests.length ?? 0) >= 4 ? true : undefined), 20_000, 'the fourth model call')
    const newest = await h().waitFor(async () => {
      const read = await view({})
      return read.counts.turns >= 7 ? read : undefined
    }, 10_000, 'the second results turn in the view')
    expect(newest.turns.map(turn => turn.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user'])
    const oldest = await view({ turnsAfter: 0, limit: 2 })
    expect(oldest.turns.map(turn => turn.id)).toEqual(newest.turns.slice(0, 2).map(turn => turn.id))
    expect(oldest.page).toMatchObject({ from: 0, to: 2, total: 7 })
    const middle = await view({ turnsAfter: 2, limit: 3 })
    expect(middle.turns.map(turn => turn.id)).toEqual(newest.turns.slice(2, 5).map(turn => turn.id))
    release()
  }, 60_000)
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { start as startModelServer } from '../../../support/anthropic-server'
import type { SessionRunResult, SessionView } from '../../../contract/session'
import type { FakeAnthropicServer } from '../../../support/anthropic-server'
import { printLogsOnFailure, startRestateHarness } from '../../helpers/restate/restate-harness'
import { lateDoorbell, loadSessionServices } from '../../helpers/restate/session-services'
import type { RestateHarness } from '../../helpers/restate/restate-harness'

const MODEL_ENV = { ANTHROPIC_API_KEY: 'sk-ant-killed-run', ZIDANE_MODEL: 'claude-test', ZIDANE_SANDBOX: 'off' }
const KEY = 't1~killed-run'

describe('a run killed while its next model call is held', () => {
  let harness: RestateHarness | undefined
  let model: FakeAnthropicServer | undefined
  let killed = false
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  const bell = lateDoorbell()
  beforeAll(async () => {
    model = await startModelServer({ apiKey: MODEL_ENV.ANTHROPIC_API_KEY })
    model.setHandler(async (request) => {
      const messages = (request.body?.['messages'] ?? []) as Array<{ role: string; content: unknown }>
      const last = messages.at(-1)
      const afterTool = last?.role === 'user' && Array.isArray(last.content) && (last.content as Array<{ type: string }>).some(block => block.type === 'tool_result')
      if (!afterTool && messages.length === 1) return { kind: 'message', content: [{ type: 'tool_use', name: 'shell', input: { command: 'echo one' } }] }
      if (afterTool && !killed) return new Promise(() => undefined)
      return { kind: 'message', content: [{ type: 'text', text: 'second' }] }
    })
    Object.assign(process.env, MODEL_ENV, { ANTHROPIC_BASE_URL: model.url })
    harness = await startRestateHarness({ services: loadSessionServices({}, { doorbell: bell.doorbell }) })
    bell.connect(h().ingressUrl)
  })
  afterAll(async () => {
    for (const name of [...Object.keys(MODEL_ENV), 'ANTHROPIC_BASE_URL']) Reflect.deleteProperty(process.env, name)
    await harness?.stop()
    await model?.close()
  })
  printLogsOnFailure(() => harness)

  it('keeps the result of a call that ran to its end', async () => {
    // A viewer follows the log: the doorbell's rings sync it.
    await h().call('event_watch/wait', { key: KEY, after: 0, timeoutMs: 200 })
    const first = await h().send(`session/${KEY}/run`, { prompt: 'run echo' })
    await h().waitFor(async () => ((model?.requests.length ?? 0) >= 2 ? true : undefined), 30_000, 'the second model call')
    killed = true
    // Restate kills the run (its attempts ran out, or an operator) while its next model call is held.
    expect((await fetch(`${h().adminUrl}/invocations/${first}/kill`, { method: 'PATCH' })).status).toBe(200)
    await h().waitFor(async () => ((await h().query(`SELECT status FROM sys_invocation WHERE id = '${first}'`))[0]?.status === 'completed' ? true : undefined), 20_000, 'the kill')
    expect((await h().call<SessionRunResult>(`session/${KEY}/run`, { prompt: 'again' })).body.status).toBe('completed')
    const { turns } = (await h().call<SessionView>(`session/${KEY}/get`, null)).body
    const results = turns.flatMap(turn => turn.content).filter(block => block.type === 'tool_result')
    // The shell call ran to its end: its result stays, not "the run failed before this call finished".
    expect(results.map(block => JSON.stringify(block))).toEqual([expect.stringContaining('stdout:\\none')])
  }, 120_000)
})

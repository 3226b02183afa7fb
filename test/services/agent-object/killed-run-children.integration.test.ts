import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { start as startModelServer } from '../../../support/anthropic-server'
import type { SessionChanges } from '../../../contract/event-log'
import type { SessionRunResult, SessionView } from '../../../contract/session'
import type { FakeAnthropicServer, RecordedRequest } from '../../../support/anthropic-server'
import { printLogsOnFailure, startRestateHarness } from '../../helpers/restate/restate-harness'
import { loadSessionServices } from '../../helpers/restate/session-services'
import type { RestateHarness } from '../../helpers/restate/restate-harness'

const MODEL_ENV = { ANTHROPIC_API_KEY: 'sk-ant-killed-children', ZIDANE_MODEL: 'claude-test' }
const KEY = 't1~killed-children'

function firstPrompt(request: RecordedRequest): string {
  const [first] = (request.body?.messages ?? []) as Array<{ content: string | Array<{ text?: string }> }>
  return typeof first?.content === 'string' ? first.content : first?.content[0]?.text ?? ''
}

/**
 * A run's header waits for its next boundary, so a sub-agent's record written after the spawn is past the header's
 * counter until then. A run killed in between must not lose it: the next run writes its own record after it.
 */
describe('a run killed after its sub-agent ended, before its next boundary', () => {
  let harness: RestateHarness | undefined
  let model: FakeAnthropicServer | undefined
  let killed = false
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => {
    model = await startModelServer({ apiKey: MODEL_ENV.ANTHROPIC_API_KEY })
    model.setHandler(async (request) => {
      const prompt = firstPrompt(request)
      const assistantTurns = ((request.body?.messages ?? []) as Array<{ role: string }>).filter(message => message.role === 'assistant').length
      if (prompt === 'child task' || prompt === 'again') return { kind: 'message', content: [{ type: 'text', text: 'ok' }] }
      if (assistantTurns === 0) return { kind: 'message', content: [{ type: 'tool_use', name: 'spawn', input: { task: 'child task' } }] }
      if (!killed) return new Promise(() => undefined)
      return { kind: 'message', content: [{ type: 'text', text: 'done' }] }
    })
    Object.assign(process.env, MODEL_ENV, { ANTHROPIC_BASE_URL: model.url })
    harness = await startRestateHarness({ services: loadSessionServices() })
  })
  afterAll(async () => {
    for (const name of [...Object.keys(MODEL_ENV), 'ANTHROPIC_BASE_URL']) Reflect.deleteProperty(process.env, name)
    await harness?.stop()
    await model?.close()
  })
  printLogsOnFailure(() => harness)

  it('keeps the sub-agent\'s record', async () => {
    const first = await h().send(`session/${KEY}/run`, { prompt: 'spawn one' })
    await h().waitFor(async () => ((model?.requests ?? []).filter(request => firstPrompt(request) === 'spawn one').length >= 2 ? true : undefined), 30_000, 'the parent\'s second model call')
    killed = true
    expect((await fetch(`${h().adminUrl}/invocations/${first}/kill`, { method: 'PATCH' })).status).toBe(200)
    await h().waitFor(async () => ((await h().query(`SELECT status FROM sys_invocation WHERE id = '${first}'`))[0]?.status === 'completed' ? true : undefined), 20_000, 'the kill')
    expect((await h().call<SessionRunResult>(`session/${KEY}/run`, { prompt: 'again' })).body.status).toBe('completed')
    const { runs } = (await h().call<SessionChanges>(`session/${KEY}/changes`, { runsFrom: 0, runs: 10, turnsFrom: 0, newFrom: 0, turns: 1 })).body
    expect(runs.map(run => ({ label: run.label, prompt: run.prompt }))).toEqual([
      { label: undefined, prompt: 'spawn one' },
      { label: 'child-1', prompt: 'child task' },
      { label: undefined, prompt: 'again' },
    ])
    // The header counts the three records.
    expect((await h().call<SessionView>(`session/${KEY}/get`, {})).body.counts.runs).toBe(3)
  }, 120_000)
})

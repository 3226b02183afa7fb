import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionRunResult, SessionView } from '../../contract/session'
import { printLogsOnFailure, startRestateHarness } from '../helpers/restate/restate-harness'
import { loadSessionServices } from '../helpers/restate/session-services'
import type { RestateHarness } from '../helpers/restate/restate-harness'

interface HandlerDescription { name: string; retry_policy?: Record<string, unknown> }

describe('an agent invocation Restate kills (its attempts ran out, or an operator)', () => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => {
    harness = await startRestateHarness({ services: loadSessionServices({ ZIDANE_MAX_ATTEMPTS: '7' }) })
  })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  it('is bounded by ZIDANE_MAX_ATTEMPTS in the handlers that run agents, and only in them', async () => {
    const handlers = async (service: string): Promise<HandlerDescription[]> => ((await (await fetch(`${h().adminUrl}/services/${service}`)).json()) as { handlers: HandlerDescription[] }).handlers
    const policy = async (service: string, handler: string): Promise<Record<string, unknown> | undefined> => (await handlers(service)).find(entry => entry.name === handler)?.retry_policy
    const bounded = { max_attempts: 7, on_max_attempts: 'Kill' }
    expect([await policy('session', 'run'), await policy('session', 'deliver'), await policy('child', 'run')]).toEqual([bounded, bounded, bounded])
    // The rest keep the server's policy (unlimited in restate.toml): they run no tenant's work, and a kill would lose a message, an answer, an event.
    for (const service of ['inbox', 'resumer', 'events', 'event_watch']) for (const entry of await handlers(service)) expect(entry.retry_policy, `${service}/${entry.name}`).toEqual({ max_attempts: null })
    expect(await policy('session', 'get')).toEqual({ max_attempts: null })
  })

  it("ends up failed at the session's next run, naming the call it was in", async () => {
    const invocationId = await h().send('session/t1~killed/run', { prompt: 'ask: your name?' })
    await h().waitFor(async () => (await h().call<SessionView>('session/t1~killed/get', null)).body.pending[0], 20_000, 'the question')
    expect((await fetch(`${h().adminUrl}/invocations/${invocationId}/kill`, { method: 'PATCH' })).status).toBeLessThan(300)
    await h().waitFor(async () => (await h().query<{ status: string }>(`SELECT status FROM sys_invocation WHERE id = '${invocationId}'`))[0]?.status === 'completed', 20_000, 'the kill')
    // Nothing of the session ran at the kill: the run still reads running until the next one starts.
    expect((await h().call<SessionView>('session/t1~killed/get', null)).body.runs.map(run => run.status)).toEqual(['running'])
    const next = await h().call<SessionRunResult>('session/t1~killed/run', { prompt: 'hello again' })
    expect(next.body.text).toBe('Echo: hello again')
    const view = (await h().call<SessionView>('session/t1~killed/get', null)).body
    expect(view.runs.map(run => run.status)).toEqual(['failed', 'completed'])
    expect(view.runs[0]?.error).toMatch(/^invocation_killed: Restate ended the run before it could record its end: all 7 of its attempts failed \(ZIDANE_MAX_ATTEMPTS\), or an operator killed it\. It was in tool call ask_user \(demo_0_0_\w+\)/)
    const results = view.turns.flatMap(turn => turn.content.filter(block => block.type === 'tool_result').map(block => (block as { content: unknown }).content))
    expect(results).toEqual([expect.stringMatching(/^\[Tool use failed\]/)])
    expect(view.pending).toEqual([])
  })
})

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { KillPlan } from '../helpers/boundary-probe'
import { start } from '../../support/anthropic-server'
import type { FakeAnthropicServer, RecordedRequest, ScriptedResponse } from '../../support/anthropic-server'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

/*
 * A poison step: the services' test kill plan makes the process exit with code 1 inside the step of one tool call
 * (`read_file`, which a crash makes run again) every time that step runs, as a crash in a dependency would. The
 * supervisor restarts the services after every crash and never stops Restate or the gateway; the run ends failed.
 */

const API_KEY = 'sk-ant-poison'
const POISON_CALL = 'toolu_poison'

interface WireMessage { role: string; content: string | Array<{ type: string; text?: string }> }
interface View {
  status: string
  runs: Array<{ prompt: string; status: string; text?: string; error?: string }>
  turns: Array<{ content: Array<{ type: string; content?: unknown }> }>
  invocation?: { invocationId: string; status: string }
}

/** The latest prompt a request answers (its last user text) and how many model turns of that run came before it. */
function latestPrompt(request: RecordedRequest): { prompt: string; turn: number } {
  const messages = (request.body?.messages as unknown as WireMessage[] | undefined) ?? []
  const textOf = (message: WireMessage): string => (typeof message.content === 'string' ? message.content : message.content.map(block => block.text ?? '').join(''))
  const index = messages.findLastIndex(message => message.role === 'user' && textOf(message) !== '')
  const prompt = index === -1 ? '' : textOf(messages[index] as WireMessage)
  return { prompt, turn: messages.slice(index + 1).filter(message => message.role === 'assistant').length }
}

function text(value: string): ScriptedResponse {
  return { kind: 'message', content: [{ type: 'text', text: value }], usage: { input_tokens: 20, output_tokens: 5 } }
}

function readFile(id: string): ScriptedResponse {
  return { kind: 'message', content: [{ type: 'tool_use', id, name: 'read_file', input: { path: 'notes.txt' } }], usage: { input_tokens: 20, output_tokens: 5 } }
}

/** A stack whose services crash inside the poisoned call, the fake model that asks for it, and what a test reads. */
function poisonedStack(env: Record<string, string>) {
  let stack: TestStack | undefined
  let model: FakeAnthropicServer | undefined
  const planDir = mkdtempSync(join(tmpdir(), 'zidane-poison-'))
  const plan = join(planDir, 'plan.json')
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)
  beforeAll(async () => {
    model = await start({ apiKey: API_KEY })
    model.setHandler(request => {
      const { prompt, turn } = latestPrompt(request)
      if (prompt === 'poison') return turn === 0 ? readFile(POISON_CALL) : text('the poison run went on')
      if (prompt === 'bystander') return turn === 0 ? readFile('toolu_bystander') : text('bystander done')
      return text(`echo: ${prompt}`)
    })
    writeFileSync(plan, JSON.stringify({ killAt: 0, crashInStep: `${POISON_CALL}/tool` } satisfies KillPlan))
    // A permission policy (on a tool these runs never call) keeps every call in a step of its own: a turn of safe calls
    // would otherwise run inside the next model step, where the kill plan cannot name the call (a crash there is
    // covered by test/agent/deferred-calls.test.ts: the next attempt runs the calls in their own steps).
    stack = await startTestStack({ ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_BASE_URL: model.url, ZIDANE_MODEL: 'claude-test', ZIDANE_TEST_KILL_PLAN: plan, ZIDANE_APPROVE_TOOLS: 'shell', ...env })
  }, 120_000)
  afterAll(async () => {
    await stack?.destroy()
    await model?.close()
    rmSync(planDir, { recursive: true, force: true })
  })
  const read = async (sessionId: string, key?: string): Promise<View | undefined> => {
    const response = await s().request(`/v1/sessions/${sessionId}`, key === undefined ? {} : { key })
    return response.status === 200 ? ((await response.json()) as View) : undefined
  }
  return {
    stack: s,
    read,
    prompt: async (sessionId: string, prompt: string, key?: string): Promise<number> => (await s().request(`/v1/sessions/${sessionId}/prompts`, { method: 'POST', body: JSON.stringify({ prompt }), ...(key === undefined ? {} : { key }) })).status,
    /** Polls `probe` every 250 ms (the stack's log stays readable), failing at once when the stack gave up on a process. */
    until: async <T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 90_000): Promise<T> => {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        if (s().fatalReasons().length > 0) throw new Error(`the stack stopped while waiting for ${what}: ${s().fatalReasons().join('; ')}`)
        const value = await probe().catch(() => undefined)
        if (value !== undefined) return value
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}: ${JSON.stringify(await read('poison').catch(() => undefined))?.slice(0, 3_000)}`)
        await new Promise(resolve => setTimeout(resolve, 250))
      }
    },
    crashes: (): number => (existsSync(`${plan}.crashes`) ? readFileSync(`${plan}.crashes`, 'utf8').split('\n').filter(Boolean).length : 0),
    restarts: (): string[] => s().output().split('\n').filter(line => line.startsWith('[stack] services exited')),
    modelRequests: (prompt: string) => (model?.requests ?? []).map(latestPrompt).filter(request => request.prompt === prompt),
    pidOf: (name: string): number | undefined => s().processes.find(handle => handle.name === name)?.current()?.pid,
  }
}

describe('a tool call that crashes the services process on every attempt', { timeout: 120_000 }, () => {
  const t = poisonedStack({})

  it('fails its run after three crashes in the call, naming it; the other tenant completes; Restate and the gateway stay up', async () => {
    const [restatePid, gatewayPid] = [t.pidOf('restate'), t.pidOf('gateway')]
    const startedAt = Date.now()
    expect(await t.prompt('poison', 'poison')).toBe(202)
    await t.until(async () => (t.crashes() >= 1 ? true : undefined), 'a crash in the poisoned call')
    // Another tenant prompts while the services keep crashing: its steps are caught in the next crashes.
    const bystanderKey = t.stack().apiKeys[1]
    expect(await t.prompt('bystander', 'bystander', bystanderKey)).toBe(202)

    const failed = await t.until(async () => {
      const view = await t.read('poison')
      return view?.status === 'failed' ? view : undefined
    }, 'the poisoned run to fail')
    const endedMs = Date.now() - startedAt
    expect(failed.runs.map(run => [run.prompt, run.status])).toEqual([['poison', 'failed']])
    expect(failed.runs[0]?.error).toMatch(/^step_crashed: 3 attempts ended while step run_1_\w+\/t\d+\/toolu_poison\/tool ran/)
    const results = failed.turns.flatMap(turn => turn.content.filter(block => block.type === 'tool_result').map(block => block.content))
    expect(results).toEqual([expect.stringMatching(/^\[Tool use failed\]/)])
    const bystander = await t.until(async () => {
      const view = await t.read('bystander', bystanderKey)
      return view?.status === 'completed' ? view : undefined
    }, "the other tenant's run")
    expect(bystander.runs.map(run => [run.status, run.text])).toEqual([['completed', 'bystander done']])
    console.info(`poison, crash guard: the run failed ${endedMs} ms after its prompt, after ${t.crashes()} crashes in its call; ${t.restarts().length} restarts of the services:\n${t.restarts().join('\n')}`)

    // The session goes on: its next prompt runs. The poisoned run asked the model once (its step is journaled).
    expect(await t.prompt('poison', 'after')).toBe(202)
    const after = await t.until(async () => {
      const view = await t.read('poison')
      return view?.status === 'completed' ? view : undefined
    }, 'the next prompt of the poisoned session')
    expect(after.runs.map(run => [run.prompt, run.status, run.text])).toEqual([['poison', 'failed', undefined], ['after', 'completed', 'echo: after']])
    expect(t.modelRequests('poison')).toEqual([{ prompt: 'poison', turn: 0 }])

    // Crashes only ever restarted the services: the same Restate server and gateway throughout, nothing fatal.
    expect(t.crashes()).toBe(3)
    expect(t.restarts().length).toBeGreaterThanOrEqual(3)
    expect(t.stack().fatalReasons()).toEqual([])
    expect([t.pidOf('restate'), t.pidOf('gateway')]).toEqual([restatePid, gatewayPid])
    expect((await fetch(`${t.stack().gatewayUrl}/readyz`)).status).toBe(200)
  })
})

describe('the same call with the crash guard off: Restate kills the run after ZIDANE_MAX_ATTEMPTS', { timeout: 120_000 }, () => {
  const MAX_ATTEMPTS = 16
  const t = poisonedStack({ ZIDANE_MAX_STEP_CRASHES: '0', ZIDANE_MAX_ATTEMPTS: String(MAX_ATTEMPTS) })

  it('ends the run, and the next prompt records it failed, naming the call it was in', async () => {
    const [restatePid, gatewayPid] = [t.pidOf('restate'), t.pidOf('gateway')]
    const startedAt = Date.now()
    expect(await t.prompt('poison', 'poison')).toBe(202)
    const killed = await t.until(async () => {
      const view = await t.read('poison')
      return view?.invocation?.status === 'killed' ? view : undefined
    }, 'Restate to kill the poisoned run')
    console.info(`poison, retry bound: Restate killed the run ${Date.now() - startedAt} ms after its prompt, after ${MAX_ATTEMPTS} attempts, ${t.crashes()} of them crashing in the call; ${t.restarts().length} restarts of the services; the session read said ${killed.status}`)
    expect(t.crashes()).toBeGreaterThanOrEqual(2)

    expect(await t.prompt('poison', 'after')).toBe(202)
    const after = await t.until(async () => {
      const view = await t.read('poison')
      return view?.status === 'completed' ? view : undefined
    }, 'the next prompt of the poisoned session')
    expect(after.runs.map(run => [run.prompt, run.status])).toEqual([['poison', 'failed'], ['after', 'completed']])
    expect(after.runs[0]?.error).toMatch(new RegExp(`^invocation_killed: .*all ${MAX_ATTEMPTS} of its attempts failed \\(ZIDANE_MAX_ATTEMPTS\\).*It was in tool call read_file \\(toolu_poison\\)`))
    expect(t.stack().fatalReasons()).toEqual([])
    expect([t.pidOf('restate'), t.pidOf('gateway')]).toEqual([restatePid, gatewayPid])
  })
})

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { start } from '../../support/anthropic-server'
import type { FakeAnthropicServer } from '../../support/anthropic-server'
import { demoAnswer, modelStepKey } from '../../support/demo-wire-model'
import { waitFor } from '../helpers/restate/restate-harness'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

/*
 * The steering check under kills: a 3-turn run (two shell turns, then the answer) with a message steered into it as it
 * starts, run normally, then with the services SIGKILLed right before each live journal boundary of the run (the
 * replay matrix's kill plan, `test/helpers/boundary-probe.ts`) and restarted, and with every await suspended and
 * replayed. The run awaits each step together with the inbox's signal (`watchSteps`): every cell must deliver the
 * message exactly once (at a turn boundary of the run, or as the run after it), request each model step once and
 * record no journal mismatch.
 */

interface SessionView {
  runs: Array<{ prompt: string; status: string; text?: string; label?: string }>
  turns: Array<{ id: string; content: Array<{ type: string; text?: string }> }>
  invocation?: { status: string }
}

/** Runs of one cell of the kill matrix before it counts as never reaching its boundary. */
const MATRIX_ATTEMPTS = 3

let stackRef: TestStack | undefined
let model: FakeAnthropicServer | undefined
const stack = (): TestStack => { if (!stackRef) throw new Error('no stack'); return stackRef }

async function post(path: string, body: unknown): Promise<number> {
  return (await stack().request(path, { method: 'POST', body: JSON.stringify(body) })).status
}

async function readSession(sessionId: string): Promise<SessionView | undefined> {
  const response = await stack().request(`/v1/sessions/${sessionId}`)
  return response.status === 200 ? ((await response.json()) as SessionView) : undefined
}

/** How many times the steered text reached the session: as a steered turn of a run, or as the prompt of one. */
function deliveries(view: SessionView, text: string): number {
  const turns = view.turns.filter(turn => turn.id.endsWith('-s') && turn.content.some(block => block.text === text)).length
  return turns + view.runs.filter(run => run.label === undefined && run.prompt === text).length
}

function resetPlan(plan: string, killAt: number): void {
  rmSync(`${plan}.boundaries`, { force: true })
  rmSync(`${plan}.fired`, { force: true })
  writeFileSync(plan, JSON.stringify({ killAt }))
}

function boundaries(plan: string): number {
  return existsSync(`${plan}.boundaries`) ? readFileSync(`${plan}.boundaries`, 'utf8').split('\n').filter(Boolean).length : 0
}

/** Prompts, steers at once, and waits until every run of the session ended and the message was delivered. */
async function steeredRun(tag: string, plan?: string): Promise<SessionView> {
  const sessionId = `steer-${tag}`
  const prompt = `shell: echo one ${tag}\nshell: echo two ${tag}`
  // A directive: the run goes on after it joins (the demo model plays the newest user text), so boundaries follow it.
  const text = `shell: echo steered ${tag}`
  expect(await post(`/v1/sessions/${sessionId}/prompts`, { prompt })).toBe(202)
  expect(await post(`/v1/sessions/${sessionId}/messages`, { text })).toBe(202)
  let restarted = false
  const view = await waitFor(async () => {
    if (plan && !restarted && existsSync(`${plan}.fired`)) {
      stack().services().resume()
      restarted = true
    }
    const current = await readSession(sessionId)
    if (!current || deliveries(current, text) === 0) return undefined
    const settled = current.runs.every(run => run.status !== 'running') && current.invocation?.status !== 'running'
    return settled ? current : undefined
  }, 120_000, `the steered run of ${sessionId}`)
  // A `deliver` run behind it may still start: give it the time to show.
  await new Promise(resolve => setTimeout(resolve, 500))
  const final = (await readSession(sessionId)) ?? view
  expect(deliveries(final, text), JSON.stringify(final.turns.map(turn => turn.id))).toBe(1)
  const joined = final.turns.find(turn => turn.id.endsWith('-s'))?.id.replace(/^.*-(t\d+-s)$/, '$1')
  console.info(`${tag}: the message ${joined ? `joined the run at ${joined}` : 'ran as the next run'}`)
  expect(final.runs.filter(run => run.label === undefined && run.prompt === prompt).map(run => run.status)).toEqual(['completed'])
  return final
}

function expectModelStepsOnce(): void {
  const keys = (model?.requests ?? []).map(modelStepKey)
  expect(keys.filter((key, index) => keys.indexOf(key) !== index)).toEqual([])
}

async function expectNoJournalMismatch(): Promise<void> {
  const response = await fetch(`${stack().adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query: "SELECT id FROM sys_invocation WHERE last_failure_error_code = 'RT0016' OR last_failure LIKE '%mismatch%'" }) })
  expect(((await response.json()) as { rows: unknown[] }).rows).toEqual([])
  expect(stack().output()).not.toMatch(/RT0016|journal mismatch|non-?determinis/i)
}

async function startSteeringStack(env: Record<string, string>): Promise<void> {
  model = await start({ apiKey: 'sk-ant-steer' })
  model.setHandler(demoAnswer)
  stackRef = await startTestStack({ ANTHROPIC_API_KEY: 'sk-ant-steer', ANTHROPIC_BASE_URL: model.url, ZIDANE_MODEL: 'claude-steer', ZIDANE_SANDBOX: 'off', ...env }, { tenants: 1 })
}

async function stopSteeringStack(): Promise<void> {
  await stackRef?.destroy()
  await model?.close()
  stackRef = undefined
  model = undefined
}

describe('steering: normal and SIGKILL at every journal boundary', () => {
  const planDir = mkdtempSync(join(tmpdir(), 'zidane-steer-plan-'))
  const plan = join(planDir, 'plan.json')
  let total = 0
  beforeAll(async () => { await startSteeringStack({ ZIDANE_TEST_KILL_PLAN: plan }) }, 240_000)
  afterAll(async () => {
    await stopSteeringStack()
    rmSync(planDir, { recursive: true, force: true })
  })
  printStackOutputOnFailure(() => stackRef)

  it('delivers a message steered into a running run once', async () => {
    resetPlan(plan, 0)
    await steeredRun('n0', plan)
    total = boundaries(plan)
    expect(total).toBeGreaterThanOrEqual(3)
  }, 180_000)

  it('delivers it once with the services killed before each journal boundary', async () => {
    console.info(`steering kill matrix: SIGKILL at each of ${total} journal boundaries`)
    for (let killAt = 1; killAt <= total; killAt++) {
      // Where the message joins depends on timing, and with it how many boundaries a run has: a run that ended before
      // its `killAt`-th boundary (or passed it only with a step in flight) is run again, up to twice more.
      for (let attempt = 0; attempt < MATRIX_ATTEMPTS; attempt++) {
        resetPlan(plan, killAt)
        await steeredRun(`k${killAt}${attempt === 0 ? '' : `-${attempt}`}`, plan)
        if (existsSync(`${plan}.fired`)) break
      }
      expect(existsSync(`${plan}.fired`), `boundary ${killAt} of ${total}`).toBe(true)
    }
    expectModelStepsOnce()
    await expectNoJournalMismatch()
  }, 900_000)
})

describe('steering: always replay', () => {
  beforeAll(async () => { await startSteeringStack({ ZIDANE_INACTIVITY_TIMEOUT_MS: '0' }) }, 240_000)
  afterAll(stopSteeringStack)
  printStackOutputOnFailure(() => stackRef)

  it('delivers a message steered into a running run once, every await suspended and replayed', async () => {
    for (const tag of ['r1', 'r2', 'r3']) await steeredRun(tag)
    expectModelStepsOnce()
    await expectNoJournalMismatch()
  }, 300_000)
})

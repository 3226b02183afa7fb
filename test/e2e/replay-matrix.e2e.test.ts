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
import { sessionKey, tenantOf } from '../../ingress-gateway/tenancy'
import * as clients from '@restatedev/restate-sdk-clients'
import { eventLogInterface } from '../../contract/interfaces'
import type { ReadEventsResult } from '../../contract/event-log'

/*
 * The replay matrix: every scenario through the real services on a real server, in three modes. `normal`; `always
 * replay` (handler inactivity timeout 0: the invocation suspends at every await and replays its journal on each
 * resume); and `kill at k` for every live journal boundary k of the scenario (the services SIGKILL themselves right
 * before issuing their k-th step, then restart). Each cell must end like the normal run, with every side effect and
 * every model step once, and no journal mismatch anywhere.
 */

/** How a cell's run ended, and the session's event log (own events in order, the sub-agents' sorted: they overlap). */
interface RunEnd { status: string; text: string; events: string[] }
interface Scenario {
  name: string
  /** Runs before the measured prompt (its boundaries are not counted). */
  setup?: (cell: Cell) => Promise<void>
  prompt: (cell: Cell) => string
  /** What each question or approval of the run is answered with, in order. */
  answers?: string[]
  /** Checks of the normal run beyond "same as normal in every other mode". */
  check: (end: Omit<RunEnd, 'events'>, cell: Cell) => void
}
interface Cell { tag: string; sessionId: string; ledger: string }
interface SessionView {
  status: string
  runs: Array<{ prompt: string; status: string; text?: string; label?: string }>
  turns: Array<{ content: Array<{ type: string; content?: unknown }> }>
  pending: Array<{ id: string; answerUrl: string }>
  invocation?: { invocationId: string; status: string }
}

const FIVE_MB = 5_000_000
const SCENARIOS: Scenario[] = [
  { name: 'plain prompt', prompt: cell => `hello ${cell.tag}`, check: (end, cell) => expect(end).toEqual({ status: 'completed', text: `Echo: hello ${cell.tag}` }) },
  {
    name: 'todowrite then todoread',
    prompt: cell => `todo: buy milk ${cell.tag} | call Ada\ntodos:`,
    check: (end, cell) => { expect(end.status).toBe('completed'); expect(end.text).toMatch(new RegExp(`^Done: Todo list updated:[\\s\\S]*buy milk ${cell.tag}[\\s\\S]* / [\\s\\S]*buy milk ${cell.tag}`)) },
  },
  { name: 'ask_user answered', prompt: cell => `ask: your name ${cell.tag}?`, answers: ['Ada'], check: end => expect(end).toEqual({ status: 'completed', text: 'You said: Ada' }) },
  {
    name: 'approval asked and approved',
    prompt: cell => `shell: echo ${cell.tag} >> ${cell.ledger}`,
    answers: ['approve'],
    check: end => expect(end.status).toBe('completed'),
  },
  {
    name: 'spawn of 3 children with a nested grandchild',
    prompt: cell => `spawn: a ${cell.tag} | b ${cell.tag} | spawn: g ${cell.tag}`,
    check: (end, cell) => expect(end).toEqual({ status: 'completed', text: `Children answered: Echo: a ${cell.tag} / Echo: b ${cell.tag} / Children answered: Echo: g ${cell.tag}` }),
  },
  {
    name: 'a run that heals a cancelled run',
    setup: async cell => {
      await prompt(cell.sessionId, `ask: never answered ${cell.tag}?`)
      const view = await waitFor(async () => { const v = await readSession(cell.sessionId); return v?.pending[0] ? v : undefined }, 60_000, 'the question')
      expect((await stack().request(`/v1/sessions/${cell.sessionId}/cancel`, { method: 'POST' })).status).toBe(202)
      await waitFor(async () => (await readSession(cell.sessionId))?.invocation?.status === 'cancelled', 60_000, 'the cancel')
      expect(view.pending).toHaveLength(1)
    },
    prompt: cell => `hello again ${cell.tag}`,
    check: (end, cell) => expect(end).toEqual({ status: 'completed', text: `Echo: hello again ${cell.tag}` }),
  },
  {
    name: 'a run that heals a killed run (no clean-up ran)',
    setup: async cell => {
      await prompt(cell.sessionId, `ask: never answered ${cell.tag}?`)
      const view = await waitFor(async () => { const v = await readSession(cell.sessionId); return v?.pending[0] ? v : undefined }, 60_000, 'the question')
      const killed = await fetch(`${stack().adminUrl}/invocations/${view.invocation?.invocationId ?? ''}/kill`, { method: 'PATCH' })
      expect(killed.status).toBeLessThan(300)
      await waitFor(async () => (await readSession(cell.sessionId))?.invocation?.status !== 'running' || undefined, 60_000, 'the kill')
    },
    prompt: cell => `hello after kill ${cell.tag}`,
    check: (end, cell) => expect(end).toEqual({ status: 'completed', text: `Echo: hello after kill ${cell.tag}` }),
  },
  {
    name: 'a run that heals a failed run',
    setup: async cell => {
      await prompt(cell.sessionId, `fail: broken ${cell.tag}`)
      await waitFor(async () => (await readSession(cell.sessionId))?.invocation?.status === 'failed', 60_000, 'the failure')
    },
    prompt: cell => `hello after failure ${cell.tag}`,
    check: (end, cell) => expect(end).toEqual({ status: 'completed', text: `Echo: hello after failure ${cell.tag}` }),
  },
  {
    name: 'a tool throwing a terminal error',
    prompt: cell => `fail: on purpose ${cell.tag}`,
    check: end => expect(end.status).toBe('failed'),
  },
  {
    name: 'compaction',
    setup: async cell => {
      await prompt(cell.sessionId, `${'long history '.repeat(1_500)}${cell.tag}`)
      await waitFor(async () => (await readSession(cell.sessionId))?.invocation?.status === 'completed', 60_000, 'the setup run')
    },
    prompt: cell => `read: missing-${cell.tag}.txt`,
    check: end => { expect(end.status).toBe('completed'); expect(end.text).toContain('Done:') },
  },
  {
    name: 'a 5 MB tool output',
    prompt: cell => `shell: echo ${cell.tag} >> ${cell.ledger}; head -c ${FIVE_MB} /dev/zero | tr '\\0' x`,
    answers: ['approve'],
    check: end => { expect(end.status).toBe('completed'); expect(end.text).toMatch(/^Done: Exit code: 0\nstdout:\nx{100}/) },
  },
]

let stackRef: TestStack | undefined
let model: FakeAnthropicServer | undefined
const stack = (): TestStack => { if (!stackRef) throw new Error('no stack'); return stackRef }

async function prompt(sessionId: string, text: string): Promise<void> {
  const response = await stack().request(`/v1/sessions/${sessionId}/prompts`, { method: 'POST', body: JSON.stringify({ prompt: text }) })
  expect(response.status).toBe(202)
}

async function readSession(sessionId: string): Promise<SessionView | undefined> {
  const response = await stack().request(`/v1/sessions/${sessionId}`)
  return response.status === 200 ? ((await response.json()) as SessionView) : undefined
}

/** Drives a run to its end: answers each question as it appears, restarts the services after a planned kill. */
async function driveRun(cell: Cell, text: string, answers: readonly string[], killPlan: string | undefined): Promise<Omit<RunEnd, 'events'>> {
  await prompt(cell.sessionId, text)
  const answered = new Set<string>()
  let restarted = false
  return waitFor(async () => {
    if (killPlan && !restarted && existsSync(`${killPlan}.fired`)) restarted = await restartAfterKill()
    const view = await readSession(cell.sessionId)
    const run = view?.runs.filter(entry => entry.label === undefined && entry.prompt === text).at(-1)
    for (const question of view?.pending ?? []) {
      if (answered.has(question.id)) continue
      const answer = answers[answered.size] ?? 'yes'
      const url = new URL(question.answerUrl)
      const response = await fetch(`${stack().gatewayUrl}${url.pathname}${url.search}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ answer }) })
      if (response.status < 300) answered.add(question.id)
    }
    const ended = run && run.status !== 'running' && view?.invocation?.status !== 'running'
    return ended ? { status: run.status, text: run.text ?? '' } : undefined
  }, 120_000, `the run of ${cell.sessionId}`)
}

/**
 * The planned kill fired: the supervisor restarts the services by itself; this only starts them at once and resets
 * its backoff. Stopping the copy it may have started already would drain an attempt in the middle of its replay.
 */
async function restartAfterKill(): Promise<boolean> {
  stack().services().resume()
  return true
}

/** Lines of the boundary log: the live journal boundaries the services reached since the last reset. */
function boundaries(killPlan: string): string[] {
  return existsSync(`${killPlan}.boundaries`) ? readFileSync(`${killPlan}.boundaries`, 'utf8').split('\n').filter(Boolean) : []
}

function resetPlan(killPlan: string, killAt: number): void {
  rmSync(`${killPlan}.boundaries`, { force: true })
  rmSync(`${killPlan}.fired`, { force: true })
  writeFileSync(killPlan, JSON.stringify({ killAt }))
}

function ledgerLines(ledger: string, tag: string): number {
  return existsSync(ledger) ? readFileSync(ledger, 'utf8').split('\n').filter(line => line === tag).length : 0
}

/** Every model step was requested once: no two requests share a prompt and a turn. */
function expectModelStepsOnce(): void {
  const keys = (model?.requests ?? []).map(modelStepKey)
  const repeated = keys.filter((key, index) => keys.indexOf(key) !== index)
  expect(repeated).toEqual([])
}

async function expectNoJournalMismatch(): Promise<void> {
  const rows = await fetch(`${stack().adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query: "SELECT id, last_failure FROM sys_invocation WHERE last_failure_error_code = 'RT0016' OR last_failure LIKE '%mismatch%'" }) })
  expect(((await rows.json()) as { rows: unknown[] }).rows).toEqual([])
  expect(stack().output()).not.toMatch(/RT0016|journal mismatch|non-?determinis/i)
}

async function startMatrixStack(env: Record<string, string>): Promise<void> {
  model = await start({ apiKey: 'sk-ant-matrix' })
  model.setHandler(demoAnswer)
  stackRef = await startTestStack({
    ANTHROPIC_API_KEY: 'sk-ant-matrix',
    ANTHROPIC_BASE_URL: model.url,
    ZIDANE_MODEL: 'claude-matrix',
    ZIDANE_DEMO_TOOLS: '1',
    ZIDANE_APPROVE_TOOLS: 'shell',
    ZIDANE_COMPACT_BUDGET_TOKENS: '2000',
    // The shell's side effects go to a ledger in the data folder, which a sandboxed command cannot reach: one tenant, no sandbox.
    ZIDANE_SANDBOX: 'off',
    ...env,
  }, { tenants: 1 })
}

async function stopMatrixStack(): Promise<void> {
  await stackRef?.destroy()
  await model?.close()
  stackRef = undefined
  model = undefined
}

function newCell(mode: string, index: number, scenario: number): Cell {
  const tag = `${mode}${scenario}k${index}`
  return { tag, sessionId: `m-${tag}`, ledger: join(stack().sharedDir, 'side-effects.log') }
}

/** What every cell of a scenario must match: the normal run's end, with each side effect once. */
const oracle = new Map<number, RunEnd>()

async function runCell(scenarioIndex: number, cell: Cell, killPlan?: string, killAt = 0): Promise<{ end: RunEnd; boundaries: number }> {
  const scenario = SCENARIOS[scenarioIndex] as Scenario
  await scenario.setup?.(cell)
  if (killPlan) resetPlan(killPlan, killAt)
  const end = await driveRun(cell, scenario.prompt(cell), scenario.answers ?? [], killPlan)
  const reached = killPlan ? boundaries(killPlan).length : 0
  if (scenario.prompt(cell).includes(cell.ledger)) expect(ledgerLines(cell.ledger, cell.tag)).toBe(1)
  const events = await settledEvents(cell.sessionId)
  // Each top-level run starts once in the log (every cell's syncs derive it again from the state: a duplicate would show here).
  const runs = (await readSession(cell.sessionId))?.runs.filter(run => run.label === undefined) ?? []
  expect(events.filter(event => event === 'run:start'), 'one run:start per run in the log').toHaveLength(runs.length)
  return { end: { status: end.status, text: end.text.replaceAll(cell.tag, '<tag>'), events }, boundaries: reached }
}

/**
 * The session's event log once it stopped growing: derived from the session's state by syncs that may still land
 * after the run's end (the doorbell's and the run's journaled one), the sub-agents' events through their own one-way
 * appends.
 */
async function settledEvents(sessionId: string): Promise<string[]> {
  const key = sessionKey(tenantOf(stack().apiKeys[0]), sessionId)
  const events = clients.connect({ url: stack().ingressUrl }).client(eventLogInterface, key)
  const read = (): Promise<ReadEventsResult> => events.read({ after: 0, limit: 500 })
  let last = -1
  const log = await waitFor(async () => {
    const result = await read()
    const settled = result.count === last
    last = result.count
    if (!settled) await new Promise(resolve => setTimeout(resolve, 400))
    return settled ? result : undefined
  }, 30_000, `the event log of ${sessionId} to settle`)
  const label = (event: ReadEventsResult['events'][number]): string => String(event.data.label ?? '')
  const shape = (event: ReadEventsResult['events'][number]): string => `${event.type} ${label(event)} ${String(event.data.name ?? '')}`.replaceAll('  ', ' ').trim()
  return [...log.events.filter(event => label(event) === '').map(shape), ...log.events.filter(event => label(event) !== '').map(shape).sort()]
}

describe('replay matrix: normal and kill at every journal boundary', () => {
  const planDir = mkdtempSync(join(tmpdir(), 'zidane-kill-plan-'))
  const killPlan = (): string => join(planDir, 'plan.json')
  const counts = new Map<number, number>()
  beforeAll(async () => {
    await startMatrixStack({ ZIDANE_TEST_KILL_PLAN: killPlan() })
  }, 240_000)
  afterAll(async () => {
    await stopMatrixStack()
    rmSync(planDir, { recursive: true, force: true })
  })
  printStackOutputOnFailure(() => stackRef)

  SCENARIOS.forEach((scenario, index) => {
    it(`${scenario.name}: normal`, async () => {
      const cell = newCell('n', 0, index)
      const { end, boundaries: reached } = await runCell(index, cell, killPlan(), 0)
      scenario.check({ status: end.status, text: end.text.replaceAll('<tag>', cell.tag) }, cell)
      expect(end.events).toContain('run:end')
      oracle.set(index, end)
      counts.set(index, reached)
      expect(reached).toBeGreaterThan(0)
    })
  })

  SCENARIOS.forEach((scenario, index) => {
    it(`${scenario.name}: SIGKILL at every journal boundary`, async () => {
      const total = counts.get(index) ?? 0
      expect(total, "the normal run counted its boundaries").toBeGreaterThan(0)
      console.info(`kill matrix: ${scenario.name}: SIGKILL at each of ${total} journal boundaries`)
      for (let killAt = 1; killAt <= total; killAt++) {
        const cell = newCell('k', killAt, index)
        const { end } = await runCell(index, cell, killPlan(), killAt)
        expect(existsSync(`${killPlan()}.fired`), `boundary ${killAt} of ${total}: ${boundaries(killPlan()).join(", ")}`).toBe(true)
        expect(end, `killed at boundary ${killAt} of ${total}`).toEqual(oracle.get(index))
      }
      expectModelStepsOnce()
      await expectNoJournalMismatch()
    }, 600_000)
  })
})

describe('replay matrix: always replay', () => {
  beforeAll(async () => { await startMatrixStack({ ZIDANE_INACTIVITY_TIMEOUT_MS: '0' }) }, 240_000)
  afterAll(stopMatrixStack)
  printStackOutputOnFailure(() => stackRef)

  it('really replays: a run waiting on a question is suspended at once', async () => {
    const cell = newCell('r', 0, 99)
    await prompt(cell.sessionId, `ask: suspended ${cell.tag}?`)
    const view = await waitFor(async () => { const v = await readSession(cell.sessionId); return v?.pending[0] ? v : undefined }, 60_000, 'the question')
    const query = JSON.stringify({ query: `SELECT status FROM sys_invocation WHERE id = '${view.invocation?.invocationId ?? ''}'` })
    const status = async (): Promise<string | undefined> => {
      const response = await fetch(`${stack().adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: query })
      return ((await response.json()) as { rows: Array<{ status: string }> }).rows[0]?.status
    }
    // With the handlers' inactivity timeout at 0, Restate suspends the run as soon as it waits: every resume replays.
    await waitFor(async () => (await status()) === 'suspended', 10_000, 'a suspended invocation')
  })

  SCENARIOS.forEach((scenario, index) => {
    it(`${scenario.name}: always replay`, async () => {
      const cell = newCell('a', 0, index)
      const { end } = await runCell(index, cell)
      scenario.check({ status: end.status, text: end.text.replaceAll('<tag>', cell.tag) }, cell)
      // Every attempt replays and records the events again: the log still holds each once, as in the normal run.
      expect(end.events, 'the same log as the normal cell (run the whole file)').toEqual(oracle.get(index)?.events)
    })
  })

  it('requested every model step once and recorded no journal mismatch', async () => {
    expectModelStepsOnce()
    await expectNoJournalMismatch()
  })
})

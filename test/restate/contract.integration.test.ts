import * as restate from '@restatedev/restate-sdk'
import { RestatePromise } from '@restatedev/restate-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stepKey } from '../../src/durable/runtime'
import type { DurableRuntime } from '../../src/durable/runtime'
import { restateRuntime } from '../../src/restate/index'
import type { RestateHarness } from '../helpers/restate/restate-harness'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'

/*
 * The durable contract, checked against `restateRuntime` inside a real handler on a real server, in both modes. Each
 * case runs in the handler and returns what it observed; cases that must be replay-stable fail their first attempt
 * once (a retryable error after the values were taken), so the second attempt replays them from the journal.
 * (`resumed: true` after a real crash inside a step is proven in crash.integration.test.ts.)
 */
const closureRuns = new Map<string, number>()
const firstAttempt = new Map<string, unknown>()
const ran = (key: string): void => { closureRuns.set(key, (closureRuns.get(key) ?? 0) + 1) }

/** Throws a retryable error the first time `tag` passes here: the retry replays everything before it. */
function failOnce(tag: string, observed: unknown): void {
  if (firstAttempt.has(tag)) return
  firstAttempt.set(tag, observed)
  throw new Error(`retry ${tag} once`)
}

type Case = (runtime: DurableRuntime, tag: string) => Promise<unknown>

const CASES: Record<string, Case> = {
  async stepOnce(runtime, tag) {
    const value = await runtime.step(stepKey('run', 'tool', tag), async attempt => { ran(tag); return { answer: 42, resumed: attempt.resumed } })
    failOnce(tag, value)
    return value
  },
  async stableClockAndIds(runtime, tag) {
    const observed = { now: await runtime.now(), ids: [runtime.uuid(), runtime.uuid()] }
    failOnce(tag, observed)
    return observed
  },
  async overlappingAll(runtime, tag) {
    const work = (name: string): Promise<[number, number]> => runtime.step(stepKey('run', 'tool', tag, name), async () => {
      const start = Date.now()
      await new Promise(resolve => setTimeout(resolve, 200))
      return [start, Date.now()]
    })
    return runtime.all([work('x'), work('y'), work('z')])
  },
  async raceAndAllSettled(runtime, tag) {
    const slow = runtime.step(stepKey('run', 'tool', tag, 'slow'), async () => { await new Promise(resolve => setTimeout(resolve, 300)); return 'slow' })
    const fast = runtime.step(stepKey('run', 'tool', tag, 'fast'), async () => 'fast')
    const winner = await runtime.race([slow, fast])
    const failing = runtime.step(stepKey('run', 'tool', tag, 'fails'), async () => { throw new Error('recorded failure') })
    const ok = runtime.step(stepKey('run', 'tool', tag, 'ok'), async () => 'ok')
    const settled = await runtime.allSettled?.([failing, ok])
    const observed = { winner, settled: settled?.map(result => result.status) }
    failOnce(tag, observed)
    return observed
  },
  async sleepDurably(runtime, tag) {
    const before = await runtime.now()
    await runtime.sleep(200)
    const after = await runtime.now()
    failOnce(tag, { before, after })
    return { before, after }
  },
  async awakeableAnsweredEarly(runtime, tag) {
    const awakeable = runtime.awakeable<string>(stepKey('run', 'custom', tag))
    await runtime.resolveAwakeable(awakeable.id, 'yes')
    return awakeable.wait()
  },
  async awakeableTimeout(runtime, tag) {
    return runtime.awakeable<string>(stepKey('run', 'custom', tag), { timeoutMs: 100 }).wait()
  },
  async contextInsideStep(runtime, tag) {
    try {
      await runtime.step(stepKey('run', 'tool', tag), async () => ({ now: await runtime.now() }))
      return { refused: false }
    } catch (error) {
      return { refused: true, message: error instanceof Error ? error.message : String(error) }
    }
  },
  async contextInsideOutlivingStep(runtime, tag) {
    // Two closures at once (parallel tool calls): the short one ends and is journaled first, the long one goes on.
    const short: Promise<unknown> = runtime.step(stepKey('run', 'tool', tag, 'short'), async () => 'short')
    const long: Promise<unknown> = runtime.step(stepKey('run', 'tool', tag, 'long'), async () => {
      await new Promise(resolve => setTimeout(resolve, 150))
      return { now: await runtime.now() }
    })
    const settled = await runtime.allSettled?.([short, long]) ?? []
    return settled.map(result => (result.status === 'fulfilled' ? { value: result.value } : { refused: result.reason instanceof Error ? result.reason.message : String(result.reason) }))
  },
}

const contractProbe = restate.object({
  name: 'ContractProbe',
  handlers: {
    run: async (ctx: restate.ObjectContext, name: string): Promise<unknown> => {
      const runtime = restateRuntime(ctx, { promises: RestatePromise, idSeed: `${ctx.key}:${ctx.request().id}`, runOptions: { tool: { maxRetryAttempts: 1 } } })
      const body = CASES[name]
      if (!body) throw new restate.TerminalError(`unknown case ${name}`)
      return body(runtime, `${ctx.key}/${name}`)
    },
  },
})

describe.each(REPLAY_MODES)('durable contract on restateRuntime ($mode)', ({ mode, alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const call = async <T>(name: string, key = `${mode}-${name}`): Promise<T> => {
    const response = await harness!.call<T>(`ContractProbe/${key}/run`, name)
    expect(response.status, JSON.stringify(response.body)).toBe(200)
    return response.body
  }
  beforeAll(async () => { harness = await startRestateHarness({ services: [contractProbe], alwaysReplay }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  it('runs a step once, fresh (not resumed), and replays its result on the next attempt', async () => {
    expect(await call('stepOnce')).toEqual({ answer: 42, resumed: false })
    expect(closureRuns.get(`${mode}-stepOnce/stepOnce`)).toBe(1)
  })

  it('returns the same now() and uuid() on a replay, and distinct ids', async () => {
    const observed = await call<{ now: number; ids: string[] }>('stableClockAndIds')
    expect(observed).toEqual(firstAttempt.get(`${mode}-stableClockAndIds/stableClockAndIds`))
    expect(observed.ids[0]).not.toBe(observed.ids[1])
    expect(observed.now).toBeGreaterThan(1_600_000_000_000)
  })

  it('never repeats uuid() between two runs of one key (the seed includes the invocation)', async () => {
    const key = `${mode}-two-runs`
    const first = await call<{ ids: string[] }>('stableClockAndIds', key)
    firstAttempt.delete(`${key}/stableClockAndIds`)
    const second = await call<{ ids: string[] }>('stableClockAndIds', key)
    expect(second.ids.filter(id => first.ids.includes(id))).toEqual([])
  })

  it('joins concurrent steps with all(), which overlap in time', async () => {
    const spans = await call<Array<[number, number]>>('overlappingAll')
    expect(Math.max(...spans.map(span => span[0]))).toBeLessThan(Math.min(...spans.map(span => span[1])))
  })

  it('race() takes the first step to finish and allSettled() reports each outcome, the same on replay', async () => {
    const observed = await call('raceAndAllSettled')
    expect(observed).toEqual({ winner: 'fast', settled: ['rejected', 'fulfilled'] })
    expect(observed).toEqual(firstAttempt.get(`${mode}-raceAndAllSettled/raceAndAllSettled`))
  })

  it('sleeps durably', async () => {
    const observed = await call<{ before: number; after: number }>('sleepDurably')
    expect(observed.after - observed.before).toBeGreaterThanOrEqual(200)
    expect(observed).toEqual(firstAttempt.get(`${mode}-sleepDurably/sleepDurably`))
  })

  it('keeps an awakeable answer given before anyone waits, and times one out', async () => {
    expect(await call('awakeableAnsweredEarly')).toEqual({ timedOut: false, value: 'yes' })
    expect(await call('awakeableTimeout')).toEqual({ timedOut: true })
  })

  it('refuses a runtime call made inside a step, naming the step', async () => {
    const observed = await call<{ refused: boolean; message: string }>('contextInsideStep')
    expect(observed.refused).toBe(true)
    expect(observed.message).toContain(`run/${mode}-contextInsideStep/contextInsideStep/tool`)
    expect(observed.message).toContain('runtime.now()')
  })

  it('still refuses a runtime call inside a step that outlives a parallel step already journaled', async () => {
    const [short, long] = await call<Array<{ value?: unknown; refused?: string }>>('contextInsideOutlivingStep')
    expect(short).toEqual({ value: 'short' })
    expect(long?.refused).toContain(`run/${mode}-contextInsideOutlivingStep/contextInsideOutlivingStep/long/tool`)
    expect(long?.refused).toContain('runtime.now()')
  })
})

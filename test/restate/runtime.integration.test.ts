import * as restate from '@restatedev/restate-sdk'
import { RestatePromise } from '@restatedev/restate-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stepKey } from '../../src/durable/runtime'
import { awakeableWithTimeout, restateRuntime } from '../../src/restate/index'
import type { RestateHarness } from '../helpers/restate/restate-harness'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'

/** Executions of each step closure, across attempts (the service runs in this process). */
const executions = new Map<string, number>()
const failedOnce = new Set<string>()
const resumedFlags = new Map<string, boolean[]>()
const count = (name: string): void => { executions.set(name, (executions.get(name) ?? 0) + 1) }

const runtimeProbe = restate.object({
  name: 'RuntimeProbe',
  handlers: {
    /** Three sequential steps, then a retryable failure once: the retry replays the journaled steps. */
    steps: async (ctx: restate.ObjectContext, tag: string): Promise<{ values: number[]; resumed: boolean[]; ids: string[] }> => {
      const durable = restateRuntime(ctx, { promises: RestatePromise, idSeed: ctx.key })
      const values: number[] = []
      const resumed = resumedFlags.get(tag) ?? []
      resumedFlags.set(tag, resumed)
      for (const index of [1, 2, 3]) {
        values.push(await durable.step(stepKey('run', 'custom', tag, index), async attempt => {
          count(`${tag}/${index}`)
          resumed.push(attempt.resumed)
          return index * 10
        }))
      }
      const ids = [durable.uuid(), durable.uuid()]
      if (!failedOnce.has(tag)) {
        failedOnce.add(tag)
        throw new Error('retry me once')
      }
      return { values, resumed, ids }
    },
    /** Three 300 ms steps started together and joined with the runtime's `all`. */
    concurrent: async (ctx: restate.ObjectContext): Promise<Array<{ start: number; end: number }>> => {
      const durable = restateRuntime(ctx, { promises: RestatePromise })
      const steps = [1, 2, 3].map(index => durable.step(stepKey('run', 'custom', 'c', index), async () => {
        const start = Date.now()
        await new Promise(resolve => setTimeout(resolve, 300))
        return { start, end: Date.now() }
      }))
      return durable.all(steps)
    },
    /** Without combinators the steps run one at a time. */
    sequential: async (ctx: restate.ObjectContext): Promise<Array<{ start: number; end: number }>> => {
      const durable = restateRuntime(ctx)
      const steps = [1, 2].map(index => durable.step(stepKey('run', 'custom', 's', index), async () => {
        const start = Date.now()
        await new Promise(resolve => setTimeout(resolve, 150))
        return { start, end: Date.now() }
      }))
      return durable.all(steps)
    },
    /** A failing step is recorded: the replay sees the same failure without running the closure again. */
    failing: async (ctx: restate.ObjectContext, tag: string): Promise<string> => {
      const durable = restateRuntime(ctx, { promises: RestatePromise })
      let message = ''
      try {
        await durable.step(stepKey('run', 'custom', tag), async () => {
          count(tag)
          throw new Error('boom')
        })
      } catch (error) {
        message = `${(error as Error).name}:${(error as Error).message}:${durable.isControlError(error)}`
      }
      if (!failedOnce.has(tag)) {
        failedOnce.add(tag)
        throw new Error('retry me once')
      }
      return message
    },
    timeout: async (ctx: restate.ObjectContext): Promise<{ timedOut: boolean; awakeableId: string }> => {
      const { id, promise } = awakeableWithTimeout<string>(ctx, { timeoutMs: 300, promises: RestatePromise })
      const outcome = await promise
      return { timedOut: outcome.timedOut, awakeableId: id }
    },
    runtimeAwakeable: async (ctx: restate.ObjectContext): Promise<unknown> => {
      const durable = restateRuntime(ctx, { promises: RestatePromise })
      const awakeable = durable.awakeable<string>(stepKey('run', 'custom', 'awk'), { timeoutMs: 60_000 })
      await durable.step(stepKey('run', 'interaction', 'notify'), async () => {
        ctx.console.log('awakeable', awakeable.id)
        return awakeable.id
      })
      ctx.set('awakeable', awakeable.id)
      return awakeable.wait()
    },
    /** Two at-most-once steps started together and a plain one, then a retryable failure once: the retry replays all. */
    unsafe: async (ctx: restate.ObjectContext, tag: string): Promise<boolean[]> => {
      const durable = restateRuntime(ctx, { promises: RestatePromise })
      const resumed = resumedFlags.get(tag) ?? []
      resumedFlags.set(tag, resumed)
      const step = (name: string, atMostOnce: boolean): Promise<string> => durable.step(stepKey('run', 'tool', tag, name), async attempt => {
        count(`${tag}/${name}`)
        resumed.push(attempt.resumed)
        return name
      }, { atMostOnce })
      await durable.all([step('a', true), step('b', true)])
      await step('c', false)
      if (!failedOnce.has(tag)) {
        failedOnce.add(tag)
        throw new Error('retry me once')
      }
      return resumed
    },
    /**
     * An attempt that journaled a step's intent and died before the step's run command reached Restate (here: the
     * handler records the intent itself and fails), then the runtime's step: it runs with `resumed: true`.
     */
    intentOnly: async (ctx: restate.ObjectContext, tag: string): Promise<boolean> => {
      const key = stepKey('run', 'tool', tag)
      if (!failedOnce.has(tag)) {
        failedOnce.add(tag)
        await ctx.run(`intent:${key.name}`, () => true, { maxRetryAttempts: 1 })
        throw new Error('died as the step started')
      }
      const durable = restateRuntime(ctx, { promises: RestatePromise })
      return durable.step(key, async attempt => {
        count(tag)
        return attempt.resumed
      }, { atMostOnce: true })
    },
    awakeableId: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<string | null> => ctx.get<string>('awakeable')),
  },
})

describe.each(REPLAY_MODES)('restateRuntime against a real server ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => harness as RestateHarness
  beforeAll(async () => { harness = await startRestateHarness({ services: [runtimeProbe], alwaysReplay }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  it('journals steps: a replay returns the recorded results without running the closures again', async () => {
    const tag = `steps-${alwaysReplay}`
    const response = await h().call<{ values: number[]; resumed: boolean[]; ids: string[] }>(`RuntimeProbe/${tag}/steps`, tag)
    expect(response.status).toBe(200)
    expect(response.body.values).toEqual([10, 20, 30])
    expect(response.body.resumed).toEqual([false, false, false])
    expect(response.body.ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    for (const index of [1, 2, 3]) expect(executions.get(`${tag}/${index}`)).toBe(1)
  })

  it('starts concurrent steps together under RestatePromise.all', async () => {
    const response = await h().call<Array<{ start: number; end: number }>>(`RuntimeProbe/c-${alwaysReplay}/concurrent`)
    expect(response.status).toBe(200)
    const spans = response.body
    const lastStart = Math.max(...spans.map(span => span.start))
    const firstEnd = Math.min(...spans.map(span => span.end))
    expect(lastStart).toBeLessThan(firstEnd)
  })

  it('runs steps one at a time without combinators', async () => {
    const response = await h().call<Array<{ start: number; end: number }>>(`RuntimeProbe/s-${alwaysReplay}/sequential`)
    expect(response.status).toBe(200)
    const [first, second] = response.body
    expect(second?.start).toBeGreaterThanOrEqual(first?.end ?? Infinity)
  })

  it('records a failing step as a terminal failure that replays without re-running', async () => {
    const tag = `fail-${alwaysReplay}`
    const response = await h().call<string>(`RuntimeProbe/${tag}/failing`, tag)
    expect(response.status).toBe(200)
    expect(response.body).toBe('TerminalError:boom:true')
    expect(executions.get(tag)).toBe(1)
  })

  it('journals an intent before each at-most-once step and runs the step fresh after it', async () => {
    const tag = `unsafe-${alwaysReplay}`
    const response = await h().call<boolean[]>(`RuntimeProbe/${tag}/unsafe`, tag)
    expect(response.status).toBe(200)
    expect(response.body).toEqual([false, false, false])
    for (const name of ['a', 'b', 'c']) expect(executions.get(`${tag}/${name}`)).toBe(1)
    const rows = await h().query<{ name: string }>(`SELECT j.name FROM sys_journal j JOIN sys_invocation i ON j.id = i.id WHERE i.target = 'RuntimeProbe/${tag}/unsafe' AND j.entry_type = 'Command: Run' ORDER BY j.index`)
    expect(rows.map(row => row.name)).toEqual([`intent:run/${tag}/a/tool`, `intent:run/${tag}/b/tool`, `run/${tag}/a/tool`, `run/${tag}/b/tool`, `run/${tag}/c/tool`])
  })

  it('runs an at-most-once step whose intent an earlier attempt journaled with resumed: true', async () => {
    const tag = `intent-${alwaysReplay}`
    const response = await h().call<boolean>(`RuntimeProbe/${tag}/intentOnly`, tag)
    expect(response.status).toBe(200)
    expect(response.body).toBe(true)
    expect(executions.get(tag)).toBe(1)
  })

  it('times an awakeable out durably', async () => {
    const started = Date.now()
    const response = await h().call<{ timedOut: boolean }>(`RuntimeProbe/t-${alwaysReplay}/timeout`)
    expect(response.status).toBe(200)
    expect(response.body.timedOut).toBe(true)
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
  })

  it('parks the runtime awakeable until the ingress resolves it', async () => {
    const key = `a-${alwaysReplay}`
    const invocationId = await h().send(`RuntimeProbe/${key}/runtimeAwakeable`)
    const id = await h().waitFor(async () => (await h().call<string | null>(`RuntimeProbe/${key}/awakeableId`)).body, 20_000, 'awakeable id')
    expect(await h().resolveAwakeable(id, 'yes')).toBe(202)
    const result = await h().attach<unknown>(invocationId)
    expect(result.body).toEqual({ timedOut: false, value: 'yes' })
  })
})

import { describe, expect, it } from 'vitest'
import { stepKey } from '../../src/durable/runtime'
import { restateRuntime } from '../../src/restate/runtime'
import { AtMostOnceStep, issueEffects } from '../../src/restate/step-intent'
import type { RestateRunOptions } from '../../src/restate/types'
import { createFakeObjectContext } from '../helpers/restate/fake-context'
import type { FakeObjectContext } from '../helpers/restate/fake-context'

const unsafe = { atMostOnce: true } as const

/** A fake context whose journal already holds the intents named in `journaled`: their closures do not run. */
function withJournaledIntents(ctx: FakeObjectContext, journaled: readonly string[]): FakeObjectContext {
  const run = ctx.run.bind(ctx)
  return Object.assign(ctx, {
    async run<T>(name: string, fn: () => T | Promise<T>, options?: RestateRunOptions): Promise<T> {
      if (!journaled.includes(name)) return run(name, fn, options)
      ctx.runs.push({ name, options })
      return true as T
    },
  })
}

/** The fake context of one attempt of invocation `inv_1`, with the signal its end aborts. */
function attemptOf(ctx: FakeObjectContext): { ctx: FakeObjectContext; end: () => void } {
  const ended = new AbortController()
  return { ctx: Object.assign(ctx, { request: () => ({ id: 'inv_1', attemptCompletedSignal: ended.signal }) }), end: () => ended.abort() }
}

describe('intents of at-most-once steps', () => {
  it('journals the intent, then runs the effect fresh, once the intent is journaled', async () => {
    const ctx = createFakeObjectContext()
    const runtime = restateRuntime(ctx)
    const seen: string[] = []
    const value = await runtime.step(stepKey('r', 'tool', 't1', 'c1'), async attempt => {
      seen.push(...ctx.runs.map(run => run.name))
      return attempt.resumed
    }, unsafe)
    expect(value).toBe(false)
    expect(seen).toEqual(['intent:r/t1/c1/tool', 'r/t1/c1/tool'])
    expect(ctx.runs).toEqual([{ name: 'intent:r/t1/c1/tool', options: { maxRetryAttempts: 1 } }, { name: 'r/t1/c1/tool', options: { maxRetryAttempts: 1 } }])
  })

  it('tells the effect it may have started when its intent comes from the journal', async () => {
    const ctx = withJournaledIntents(createFakeObjectContext(), ['intent:r/t1/c1/tool'])
    const runtime = restateRuntime(ctx)
    expect(await runtime.step(stepKey('r', 'tool', 't1', 'c1'), async attempt => attempt.resumed, unsafe)).toBe(true)
  })

  it('journals no intent for a step that may run again, nor when intents are switched off', async () => {
    const ctx = createFakeObjectContext()
    await restateRuntime(ctx).step(stepKey('r', 'tool', 't1', 'safe'), async () => 'ok')
    await restateRuntime(ctx, { stepIntents: false }).step(stepKey('r', 'tool', 't1', 'off'), async () => 'ok', unsafe)
    expect(ctx.runs.map(run => run.name)).toEqual(['r/t1/safe/tool', 'r/t1/off/tool'])
  })

  it('joins the intents of a group first, then issues the effects in the order the steps were', async () => {
    const ctx = createFakeObjectContext()
    const runtime = restateRuntime(ctx, { promises: { all: values => Promise.all(values), race: values => Promise.race(values) } })
    const step = (name: string, atMostOnce: boolean): Promise<string> => runtime.step(stepKey('r', 'tool', 't1', name), async attempt => `${name}:${attempt.resumed}`, { atMostOnce })
    expect(await runtime.all([step('a', true), step('b', false), step('c', true)])).toEqual(['a:false', 'b:false', 'c:false'])
    expect(ctx.runs.map(run => run.name)).toEqual(['intent:r/t1/a/tool', 'r/t1/b/tool', 'intent:r/t1/c/tool', 'r/t1/a/tool', 'r/t1/c/tool'])
  })

  it('leaves a step its own await already drives to that driver: a join never issues its effect before its intent', async () => {
    let journalIntent: (value: unknown) => void = () => undefined
    const intent = new Promise(resolve => { journalIntent = resolve })
    const issued: string[] = []
    const step = new AtMostOnceStep(intent, async () => { issued.push('effect'); return 'done' }, () => undefined)
    const awaited = step.then(value => value) // its own driver: waits for the intent, then issues the effect
    const joined = await issueEffects([step], async () => undefined)
    expect(issued).toEqual([])
    journalIntent(true)
    expect(await joined[0]).toBe('done')
    expect(await awaited).toBe('done')
    expect(issued).toEqual(['effect'])
  })

  it('runs the effect as new after an attempt of this process stopped before issuing it', async () => {
    const first = attemptOf(createFakeObjectContext())
    const key = stepKey('r', 'tool', 't1', 'c1')
    // The first attempt records the intent and ends (a suspension) before the acknowledgement would let it go on.
    const never = Object.assign(first.ctx, { run: async <T>(name: string, fn: () => T | Promise<T>): Promise<T> => { first.ctx.runs.push({ name, options: undefined }); await fn(); return new Promise<T>(() => undefined) } })
    void restateRuntime(never).step(key, async () => 'never', unsafe)
    await new Promise(resolve => setImmediate(resolve))
    first.end()
    const second = attemptOf(withJournaledIntents(createFakeObjectContext(), ['intent:r/t1/c1/tool']))
    expect(await restateRuntime(second.ctx).step(key, async attempt => attempt.resumed, unsafe)).toBe(false)
    // The hint is taken: a third attempt cannot tell whether the second one started the effect.
    const third = attemptOf(withJournaledIntents(createFakeObjectContext(), ['intent:r/t1/c1/tool']))
    expect(await restateRuntime(third.ctx).step(key, async attempt => attempt.resumed, unsafe)).toBe(true)
  })
})

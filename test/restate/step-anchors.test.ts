import { describe, expect, it } from 'vitest'
import { stepKey } from '../../src/durable/runtime'
import { restateRuntime } from '../../src/restate/runtime'
import { AnchorMarks, createStepAnchors } from '../../src/restate/step-anchors'
import type { RestateRunOptions } from '../../src/restate/types'
import { createFakeObjectContext } from '../helpers/restate/fake-context'
import type { FakeObjectContext } from '../helpers/restate/fake-context'

const model = stepKey('r', 'model', 't1')
const call = stepKey('r', 'tool', 't1', 'c1')

/**
 * The fake context of one attempt of invocation `inv_1` whose journal holds the results of `journaled` (their closures
 * do not run) and ends after them: a step issued later is new (`isProcessing()` true).
 */
function attempt(journaled: Record<string, unknown> = {}): { ctx: FakeObjectContext; end: () => void } {
  const ctx = createFakeObjectContext()
  const ended = new AbortController()
  const run = ctx.run.bind(ctx)
  let replaying = Object.keys(journaled).length > 0
  Object.assign(ctx, {
    request: () => ({ id: 'inv_1', attemptCompletedSignal: ended.signal }),
    isProcessing: () => !replaying,
    async run<T>(name: string, fn: () => T | Promise<T>, options?: RestateRunOptions): Promise<T> {
      if (!(name in journaled)) {
        replaying = false
        return run(name, fn, options)
      }
      ctx.runs.push({ name, options })
      return journaled[name] as T
    },
  })
  return { ctx, end: () => ended.abort() }
}

const unsafeAfterModel = { atMostOnce: true, after: [model] } as const

describe('at-most-once steps anchored on the step that decided them', () => {
  it('journals no intent: the anchor ran in this attempt, so the call is new', async () => {
    const { ctx } = attempt()
    const runtime = restateRuntime(ctx)
    await runtime.step(model, async () => 'response')
    expect(await runtime.step(call, async step => step.resumed, unsafeAfterModel)).toBe(false)
    expect(ctx.runs.map(run => run.name)).toEqual(['r/t1/model', 'r/t1/c1/tool'])
  })

  it('reports the call as possibly started when the anchor came from the journal and the call did not', async () => {
    const { ctx } = attempt({ 'r/t1/model': 'response' })
    const runtime = restateRuntime(ctx)
    await runtime.step(model, async () => 'not run again')
    expect(await runtime.step(call, async step => step.resumed, unsafeAfterModel)).toBe(true)
  })

  it('still journals an intent for an at-most-once step issued without anchors', async () => {
    const { ctx } = attempt()
    await restateRuntime(ctx).step(call, async step => step.resumed, { atMostOnce: true })
    expect(ctx.runs.map(run => run.name)).toEqual(['intent:r/t1/c1/tool', 'r/t1/c1/tool'])
  })

  it('runs the call as new after an attempt of this process stopped between the anchor and the call', async () => {
    const marks = new AnchorMarks()
    const first = attempt()
    const anchors = createStepAnchors(first.ctx, undefined, marks)
    anchors.ran(model.name) // the model step ran; its acknowledgement never came: the attempt suspended
    anchors.produced(model.name, { text: 'response', endedAt: 1 })
    first.end()
    const second = attempt({ 'r/t1/model': 'response' })
    const again = createStepAnchors(second.ctx, undefined, marks)
    again.replayed(model.name, { text: 'response', endedAt: 1 })
    expect(await again.mayHaveStarted([model])).toBe(false)
    // Every call anchored on the same step gets the same answer in this attempt.
    expect(await again.mayHaveStarted([model])).toBe(false)
    // The mark is taken: a third attempt cannot tell whether the second one started the calls.
    const third = createStepAnchors(attempt({ 'r/t1/model': 'response' }).ctx, undefined, marks)
    expect(await third.mayHaveStarted([model])).toBe(true)
  })

  it('ignores a stop mark when the journal kept another attempt\'s result (that attempt may have gone on elsewhere)', async () => {
    const marks = new AnchorMarks()
    const first = attempt()
    const anchors = createStepAnchors(first.ctx, undefined, marks)
    anchors.ran(model.name)
    anchors.produced(model.name, { text: 'response', endedAt: 1 })
    first.end()
    // Another replica ran the model step again (its own stamp), issued the call and died before its run was journaled.
    const later = createStepAnchors(attempt({ 'r/t1/model': 'response' }).ctx, undefined, marks)
    later.replayed(model.name, { text: 'response', endedAt: 2 })
    expect(await later.mayHaveStarted([model])).toBe(true)
  })

  it('anchors a group\'s later call on its earlier ones when steps run one at a time', async () => {
    // The journal holds the model step only: the previous attempt stopped after it (a crash, or a suspension).
    const { ctx } = attempt({ 'r/t1/model': 'response' })
    const runtime = restateRuntime(ctx)
    await runtime.step(model, async () => 'not run again')
    const after = [model]
    const first = runtime.step(call, async step => step.resumed, { atMostOnce: true, after })
    // c2 is issued once c1 settled, and c1 ran in this attempt: no earlier attempt got to c2.
    const second = runtime.step(stepKey('r', 'tool', 't1', 'c2'), async step => step.resumed, { atMostOnce: true, after })
    expect(await first).toBe(true)
    expect(await second).toBe(false)
  })

  it('leaves no mark once a call anchored on the step was issued: a later attempt reports it possibly started', async () => {
    const marks = new AnchorMarks()
    const first = attempt()
    const anchors = createStepAnchors(first.ctx, undefined, marks)
    anchors.ran(model.name)
    anchors.issuing([model])
    first.end()
    const later = createStepAnchors(attempt({ 'r/t1/model': 'response' }).ctx, undefined, marks)
    expect(await later.mayHaveStarted([model])).toBe(true)
  })

  it('holds a crash test off between an anchor and the calls on it, until they settle', async () => {
    const { ctx } = attempt()
    const events: string[] = []
    const observer = {
      started: () => undefined,
      ended: (step: string) => () => { events.push(`acknowledged ${step}`) },
      intentRecorded: (step: string) => { events.push(`holding ${step}`); return () => { events.push(`released ${step}`) } },
    }
    const runtime = restateRuntime(ctx, { stepObserver: observer })
    await runtime.step(model, async () => 'response')
    await runtime.step(call, async () => 'ran', unsafeAfterModel)
    expect(events).toEqual(['holding r/t1/model', 'acknowledged r/t1/model', 'holding r/t1/c1/tool', 'released r/t1/model', 'acknowledged r/t1/c1/tool'])
    await runtime.step(stepKey('r', 'model', 't2'), async () => 'next')
    // A step issued without anchors ends the call's time as an anchor before its boundary.
    expect(events.slice(5)).toEqual(['released r/t1/c1/tool', 'holding r/t2/model', 'acknowledged r/t2/model'])
  })
})

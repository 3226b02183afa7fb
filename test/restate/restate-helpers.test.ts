import { describe, expect, it, vi } from 'vitest'
import { stepKey } from '../../src/durable/runtime'
import { isZidaneError } from '../../src/errors/zidane-error'
import { createSession, loadSession } from '../../src/session/session'
import type { SessionTurn } from '../../src/session/types'
import {
  createCoalescedClock, createReplayTracker, DEFAULT_TOOL_STATE_KEY, deterministicUuid, isRestateCancellation,
  isRestateControlError, replayAwareAbort, restateControlError, restateRuntime, restateSessionStore, restateToolStateStore,
} from '../../src/restate/index'
import { createFakeObjectContext } from '../helpers/restate/fake-context'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

class RestateError extends Error {
  constructor(message: string, readonly code = 500) { super(message); this.name = 'RestateError' }
}
class TerminalError extends RestateError { override name = 'TerminalError' }
class CancelledError extends TerminalError { override name = 'CancelledError'; constructor() { super('Cancelled', 409) } }

function turn(id: string, createdAt = 1): SessionTurn {
  return { id, runId: 'r1', role: 'user', content: [{ type: 'text', text: id }], createdAt }
}

describe('deterministicUuid', () => {
  it('is a stable RFC 4122 v4 shape', () => {
    expect(deterministicUuid('seed:0')).toMatch(UUID_V4)
    expect(deterministicUuid('seed:0')).toBe(deterministicUuid('seed:0'))
    expect(deterministicUuid('seed:0')).not.toBe(deterministicUuid('seed:1'))
    for (let index = 0; index < 200; index++) expect(deterministicUuid(`s${index}`)).toMatch(UUID_V4)
  })
})

describe('createCoalescedClock', () => {
  it('journals one anchor per window and stays strictly increasing', async () => {
    let anchors = 0
    const clock = createCoalescedClock(async () => { anchors++; return 1000 }, 4)
    const values: number[] = []
    for (let index = 0; index < 12; index++) values.push(await clock.now())
    expect(anchors).toBe(3)
    for (let index = 1; index < values.length; index++) expect(values[index]).toBeGreaterThan(values[index - 1] as number)
  })

  it('shares a reading between a run start and the session store stamp right after it (state writes between)', async () => {
    const ctx = createFakeObjectContext('k')
    const runtime = restateRuntime(ctx, { idSeed: 'k' })
    await createSession({ id: 'k', store: runtime.stores.session })
    const started = await runtime.now()
    expect(ctx.nowReads).toBe(1)
    const stored = await runtime.stores.session.load('k')
    expect(started).toBe(stored?.createdAt)
  })

  it('journals a read of its own after a context call that may take time, and for a reader reading twice', async () => {
    const ctx = createFakeObjectContext('k')
    const runtime = restateRuntime(ctx, { idSeed: 'k' })
    const first = await runtime.now()
    // The same reader twice: waits it cannot see (a tool journaling on the bare context) may lie between.
    expect(await runtime.now()).toBeGreaterThan(first)
    expect(ctx.nowReads).toBe(2)
    await runtime.step(stepKey('r', 'tool', 't1', 'c1'), async () => 'done')
    await runtime.now()
    expect(ctx.nowReads).toBe(3)
  })

  it('uses the runtime coalesce option', async () => {
    const ctx = createFakeObjectContext()
    const runtime = restateRuntime(ctx, { coalesce: true })
    for (let index = 0; index < 16; index++) await runtime.now()
    expect(ctx.nowReads).toBe(2)
  })
})

describe('createReplayTracker', () => {
  it('goes live once, runs callbacks and fires replay:done', () => {
    const callHook = vi.fn()
    const tracker = createReplayTracker({ hooks: { callHook }, resuming: true })
    const live = vi.fn()
    tracker.onLive(live)
    expect(tracker.isReplaying()).toBe(true)
    expect(tracker.isResuming()).toBe(true)
    tracker.markLive()
    tracker.markLive()
    expect(live).toHaveBeenCalledTimes(1)
    expect(callHook).toHaveBeenCalledWith('replay:done', {})
    expect(tracker.isReplaying()).toBe(false)
    expect(tracker.isResuming()).toBe(false)
    const late = vi.fn()
    tracker.onLive(late)
    expect(late).toHaveBeenCalledTimes(1)
  })

  it('is never resuming on a fresh invocation', () => {
    expect(createReplayTracker().isResuming()).toBe(false)
  })

  it('defers an abort during replay and collapses repeats', () => {
    const tracker = createReplayTracker()
    const abort = vi.fn()
    const deferred = replayAwareAbort(tracker, abort)
    deferred()
    deferred()
    expect(abort).not.toHaveBeenCalled()
    tracker.markLive()
    expect(abort).toHaveBeenCalledTimes(1)
    deferred()
    expect(abort).toHaveBeenCalledTimes(2)
  })
})

describe('error helpers', () => {
  it('recognizes Restate control errors structurally', () => {
    expect(isRestateControlError(new TerminalError('x'))).toBe(true)
    expect(isRestateControlError(new CancelledError())).toBe(true)
    expect(isRestateControlError(new RestateError('suspended', 599))).toBe(true)
    expect(isRestateControlError(new Error('plain'))).toBe(false)
    expect(isRestateControlError(new DOMException('aborted', 'TimeoutError'))).toBe(false)
    expect(isRestateControlError('TerminalError')).toBe(false)
  })

  it('finds the control error on a cause chain', () => {
    const cancelled = new CancelledError()
    const wrapped = new Error('outer', { cause: new Error('middle', { cause: cancelled }) })
    expect(restateControlError(wrapped)).toBe(cancelled)
    expect(restateControlError(new Error('none'))).toBeUndefined()
  })

  it('tells a cancellation from other terminal errors', () => {
    expect(isRestateCancellation(new CancelledError())).toBe(true)
    expect(isRestateCancellation(new TerminalError('Cancelled', 409))).toBe(false)
    expect(isRestateCancellation(new Error('Cancelled'))).toBe(false)
  })
})

describe('restateToolStateStore', () => {
  it('stores one map under the default key and refuses values over 64 KiB', async () => {
    const ctx = createFakeObjectContext()
    const store = restateToolStateStore(ctx)
    await store.set('todo', { items: ['a'] })
    expect(await store.get('todo')).toEqual({ items: ['a'] })
    expect(ctx.state.get(DEFAULT_TOOL_STATE_KEY)).toEqual({ todo: { items: ['a'] } })
    const error = await store.set('big', { blob: 'x'.repeat(70 * 1024) }).catch((caught: unknown) => caught)
    expect(isZidaneError(error) && error.code).toBe('tool_state_too_large')
    expect(await store.get('big')).toBeNull()
  })
})

describe('restateSessionStore', () => {
  it('round-trips a session and appends turns idempotently', async () => {
    const ctx = createFakeObjectContext('s1')
    const store = restateSessionStore(ctx)
    const session = await createSession({ id: 's1', store })
    await session.appendTurns([turn('t1'), turn('t2')])
    await store.appendTurns('s1', [turn('t2'), turn('t3')])
    const loaded = await loadSession(restateSessionStore(ctx), 's1')
    expect(loaded?.turns.map(item => item.id)).toEqual(['t1', 't2', 't3'])
    expect(await store.list()).toHaveLength(1)
  })
})

describe('restateRuntime with a fake context', () => {
  it('journals each step as one run with maxRetryAttempts 1 and draws ids from the seed', async () => {
    const ctx = createFakeObjectContext()
    const runtime = restateRuntime(ctx, { idSeed: 'seed' })
    expect(runtime.kind).toBe('restate')
    expect(runtime.durable).toBe(true)
    const value = await runtime.step(stepKey('r', 'tool', 't1', 'c1'), async attempt => (attempt.resumed ? 'resumed' : 'fresh'))
    expect(value).toBe('fresh')
    expect(ctx.runs).toEqual([{ name: 'r/t1/c1/tool', options: { maxRetryAttempts: 1 } }])
    expect(runtime.uuid()).toBe(deterministicUuid('seed:0'))
    expect(runtime.uuid()).toBe(deterministicUuid('seed:1'))
  })

  it('reports resumed when the context was still replaying as the step was issued', async () => {
    const ctx = createFakeObjectContext()
    let processing = false
    const runtime = restateRuntime(Object.assign(ctx, { isProcessing: () => processing }), { idSeed: 'seed' })
    expect(await runtime.step(stepKey('r', 'tool', 'a'), async attempt => attempt.resumed)).toBe(true)
    processing = true
    expect(await runtime.step(stepKey('r', 'tool', 'b'), async attempt => attempt.resumed)).toBe(false)
  })

  it('backs its stores with the object state', async () => {
    const ctx = createFakeObjectContext('k')
    const runtime = restateRuntime(ctx, { idSeed: 'k' })
    await createSession({ id: 'k', store: runtime.stores.session })
    await runtime.stores.toolState?.set('x', { y: 1 })
    expect(ctx.state.has('zidane_session')).toBe(true)
    expect(ctx.state.get(DEFAULT_TOOL_STATE_KEY)).toEqual({ x: { y: 1 } })
  })
})

describe('runtime.race', () => {
  /** A promise the runtime takes for a Restate one (it has `map`). */
  const durablePromise = <T>(value: T): Promise<T> => Object.assign(Promise.resolve(value), { map: () => durablePromise(value) })
  const combinators = { all: Promise.all.bind(Promise), race: vi.fn(Promise.race.bind(Promise)), allSettled: Promise.allSettled.bind(Promise) }

  it('refuses Restate promises without the combinators, and a mix of Restate and other promises', async () => {
    const withoutCombinators = restateRuntime(createFakeObjectContext())
    expect(() => withoutCombinators.race([durablePromise(1)])).toThrow(expect.objectContaining({ code: 'restate_promises_required' }))
    const runtime = restateRuntime(createFakeObjectContext(), { promises: combinators })
    expect(() => runtime.race([durablePromise(1), Promise.resolve(2)])).toThrow(expect.objectContaining({ code: 'restate_race_mixed' }))
  })

  it('races Restate promises with the combinator, and other promises natively', async () => {
    const runtime = restateRuntime(createFakeObjectContext(), { promises: combinators })
    expect(await runtime.race([durablePromise('a'), durablePromise('b')])).toBe('a')
    expect(combinators.race).toHaveBeenCalledTimes(1)
    expect(await runtime.race([Promise.resolve('native')])).toBe('native')
    expect(combinators.race).toHaveBeenCalledTimes(1)
  })
})

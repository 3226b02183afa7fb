import { AsyncResource } from 'node:async_hooks'
import { EventEmitter, once } from 'node:events'
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2'
import { describe, expect, it } from 'vitest'
import type { Interceptor } from '@restatedev/restate-sdk'
import { createAttemptDrain } from '../../../services/drain/attempt-drain'
import type { AttemptDrain } from '../../../services/drain/attempt-drain'

/** The parts of an HTTP/2 response the SDK and the drain use; `close()` plays Restate closing the stream. */
class FakeResponse extends EventEmitter {
  readonly written: string[] = []
  ended = false
  status: number | undefined
  write(chunk: unknown, callback?: () => void): boolean {
    this.written.push(String(chunk))
    if (callback) process.nextTick(callback)
    return true
  }
  end(...args: unknown[]): this {
    if (typeof args[0] === 'string') this.written.push(args[0])
    this.ended = true
    this.emit('ended')
    const callback = args.find(argument => typeof argument === 'function') as (() => void) | undefined
    if (callback) process.nextTick(callback)
    return this
  }
  writeHead(status: number): this {
    this.status = status
    return this
  }
  close(): void {
    this.emit('close')
  }
}

function invocationRequest(id: string | undefined): Http2ServerRequest {
  return { headers: id === undefined ? {} : { 'x-restate-invocation-id': id } } as unknown as Http2ServerRequest
}

/**
 * The run interceptor the SDK would call around each `ctx.run` closure of attempt `inv_1`. The SDK asks the hooks
 * provider for it as the attempt starts, inside the handler: so does this one, on its first call.
 */
function runInterceptor(drain: AttemptDrain): NonNullable<Interceptor['run']> {
  let run: Interceptor['run']
  return async (name, next) => {
    run ??= drain.hooks({ request: { id: 'inv_1', attemptCompletedSignal: new AbortController().signal } as never }).interceptor?.run
    if (!run) throw new Error('no run interceptor')
    return run(name, next)
  }
}

/** Serves one attempt whose handler (inside the attempt, as the SDK does) gets `body`. */
function serve(drain: AttemptDrain, body: () => void): FakeResponse {
  const response = new FakeResponse()
  drain.handler(() => body())(invocationRequest('inv_1'), response as unknown as Http2ServerResponse)
  return response
}

describe('attempt drain', () => {
  it('keeps an attempt with a running step until the step result is written, then ends it and drops later writes', async () => {
    const drain = createAttemptDrain()
    const run = runInterceptor(drain)
    let finishStep = (): void => undefined
    let step: Promise<void> = Promise.resolve()
    const response = serve(drain, () => { step = run('tool', () => new Promise<void>(resolve => { finishStep = resolve })) })
    expect(drain.runningSteps()).toBe(1)
    const drained = drain.drain()
    response.write('written while the step runs')
    expect(response.ended).toBe(false)
    finishStep()
    await step
    response.write('the step result')
    expect(response.ended).toBe(true)
    const dropped = new Promise<void>(resolve => { response.write('a command after the end', resolve) })
    await dropped
    expect(response.written).toEqual(['written while the step runs', 'the step result'])
    response.close()
    await drained
    expect(drain.openAttempts()).toBe(0)
  })

  it('never runs a step that starts after Restate closed its attempt\'s stream', async () => {
    const drain = createAttemptDrain()
    const response = new FakeResponse()
    const completed = new AbortController()
    let run: Interceptor['run']
    drain.handler(() => { run = drain.hooks({ request: { id: 'inv_closed', attemptCompletedSignal: completed.signal } as never }).interceptor?.run })(invocationRequest('inv_closed'), response as unknown as Http2ServerResponse)
    response.close()
    completed.abort() // the SDK's signal, on the same stream close
    let ran = false
    void run?.('tool', async () => { ran = true })
    await new Promise(resolve => setTimeout(resolve, 20))
    expect(ran).toBe(false)
  })

  it('never runs a step of an attempt whose stream closed before the SDK asked for its hooks', async () => {
    const drain = createAttemptDrain()
    const response = new FakeResponse()
    drain.handler(() => undefined)(invocationRequest('inv_gone'), response as unknown as Http2ServerResponse)
    response.close() // Restate closed the stream while the SDK was still reading the attempt's journal
    const completed = new AbortController()
    completed.abort()
    const run = drain.hooks({ request: { id: 'inv_gone', attemptCompletedSignal: completed.signal } as never }).interceptor?.run
    let ran = false
    void run?.('tool', async () => { ran = true })
    await new Promise(resolve => setTimeout(resolve, 20))
    expect(ran).toBe(false)
    expect(drain.runningSteps()).toBe(0)
  })

  it('counts a step for its own attempt, found by invocation id, even when its closure starts from another attempt\'s context', async () => {
    const drain = createAttemptDrain()
    let run: NonNullable<Interceptor['run']> | undefined
    // The SDK calls the hooks provider as the attempt starts, with the invocation's id.
    const own = new FakeResponse()
    drain.handler(() => { run = drain.hooks({ request: { id: 'inv_own', attemptCompletedSignal: new AbortController().signal } as never }).interceptor?.run })(invocationRequest('inv_own'), own as unknown as Http2ServerResponse)
    let finishStep = (): void => undefined
    let step: Promise<void> = Promise.resolve()
    // Its step's closure starts while another attempt's callback runs (input that arrived on the other stream).
    const other = new FakeResponse()
    drain.handler(() => { step = (run as NonNullable<Interceptor['run']>)('tool', () => new Promise<void>(resolve => { finishStep = resolve })) })(invocationRequest('inv_other'), other as unknown as Http2ServerResponse)
    const drained = drain.drain()
    await new Promise(resolve => setTimeout(resolve, 20))
    expect(other.ended).toBe(true) // idle: ended at once
    expect(own.ended).toBe(false) // its step still runs
    finishStep()
    await step
    own.write('the step result')
    expect(own.ended).toBe(true)
    own.close()
    other.close()
    await drained
  })

  it('ends an idle attempt at once, and a step that would start on it afterwards never runs', async () => {
    const drain = createAttemptDrain()
    const run = runInterceptor(drain)
    let wake = (): void => undefined
    let ran = false
    let attempted: Promise<void> | undefined
    const response = serve(drain, () => {
      void new Promise<void>(resolve => { wake = resolve }).then(() => { attempted = run('tool', async () => { ran = true }) })
    })
    const drained = drain.drain()
    await once(response, 'ended')
    wake()
    await new Promise<void>(resolve => { void Promise.resolve().then(resolve) })
    expect(attempted).toBeDefined()
    // The interceptor calls `next` synchronously when it lets a step run: not called now, never called.
    expect(ran).toBe(false)
    expect(drain.runningSteps()).toBe(0)
    response.close()
    await drained
  })

  it('waits for every running step of an attempt, also one that starts before the last result is written', async () => {
    const drain = createAttemptDrain()
    const run = runInterceptor(drain)
    const finishers: Array<() => void> = []
    const step = (name: string): Promise<void> => run(name, () => new Promise<void>(resolve => { finishers.push(resolve) }))
    let first: Promise<void> = Promise.resolve()
    let second: Promise<void> = Promise.resolve()
    let inAttempt = (start: () => Promise<void>): Promise<void> => start()
    const response = serve(drain, () => {
      first = step('a')
      second = step('b')
      inAttempt = AsyncResource.bind(start => start())
    })
    void drain.drain()
    finishers[0]?.()
    await first
    response.write('result of a')
    expect(response.ended).toBe(false)
    finishers[1]?.()
    await second
    // A step the SDK starts between the last result and its write (its command was already out) still runs.
    const third = inAttempt(() => step('c'))
    expect(drain.runningSteps()).toBe(1)
    finishers[2]?.()
    await third
    response.write('results of b and c')
    expect(response.ended).toBe(true)
    expect(response.written).toEqual(['result of a', 'results of b and c'])
  })

  it('answers new requests 503 once draining, and resolves at once when no attempt is open', async () => {
    const drain = createAttemptDrain()
    await drain.drain()
    const response = new FakeResponse()
    let served = false
    drain.handler(() => { served = true })(invocationRequest('inv_2'), response as unknown as Http2ServerResponse)
    expect(served).toBe(false)
    expect(response.status).toBe(503)
    expect(response.ended).toBe(true)
  })
})

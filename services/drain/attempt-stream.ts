import type { Http2ServerResponse } from 'node:http2'

type WriteCallback = (error?: Error | null) => void

/**
 * One invocation attempt's HTTP/2 stream, seen by the drain. `open`: everything the SDK writes goes out. `ending`:
 * its last step finished while draining, so its next write (that step's result) goes out and then the stream ends.
 * `ended`: the stream has ended; later writes are dropped (reported written), so nothing more is journaled.
 */
export interface AttemptStream {
  readonly phase: 'open' | 'ending' | 'ended'
  /** Steps (`ctx.run` closures) of this attempt running now. */
  readonly steps: number
  /** Grows with every write and every step start: unchanged means nothing happened in between. */
  readonly activity: number
  stepStarted(): void
  /** A step ended; `draining` makes the attempt end after its next write when no other step runs. */
  stepFinished(draining: boolean): void
  /** Resolves once every write handed to the stream so far has been flushed. */
  writesFlushed(): Promise<void>
  /** Ends the stream now (END_STREAM after what was written). */
  end(): void
}

/** Wraps `response` (before the SDK writes to it) and calls `onClose` once its stream has closed. */
export function trackAttempt(response: Http2ServerResponse, onClose: () => void): AttemptStream {
  const write = response.write.bind(response) as (chunk: unknown, callback: WriteCallback) => boolean
  const end = response.end.bind(response) as (...args: unknown[]) => unknown
  let phase: AttemptStream['phase'] = 'open'
  let steps = 0
  let activity = 0
  let pendingWrites = 0
  let flushed: Array<() => void> = []
  const settleWrite = (): void => {
    pendingWrites--
    if (pendingWrites > 0) return
    for (const resolve of flushed) resolve()
    flushed = []
  }
  const attempt: AttemptStream = {
    get phase() { return phase },
    get steps() { return steps },
    get activity() { return activity },
    stepStarted: () => {
      steps++
      activity++
      // A step whose command went out before the end was decided: it runs, and the end waits for its result.
      if (phase === 'ending') phase = 'open'
    },
    stepFinished: draining => {
      steps--
      if (draining && steps === 0 && phase === 'open') phase = 'ending'
    },
    writesFlushed: () => (pendingWrites === 0 ? Promise.resolve() : new Promise(resolve => { flushed.push(resolve) })),
    end: () => {
      if (phase === 'ended') return
      phase = 'ended'
      end()
    },
  }
  const patched = response as unknown as { write: (...args: unknown[]) => boolean; end: (...args: unknown[]) => unknown }
  // The SDK writes bytes with a callback (`write(chunk, callback)`) and ends with `end(callback)`.
  patched.write = (chunk: unknown, ...rest: unknown[]) => {
    const callback = rest.find((argument): argument is WriteCallback => typeof argument === 'function')
    if (phase === 'ended') {
      if (callback) process.nextTick(callback)
      return true
    }
    activity++
    pendingWrites++
    const result = write(chunk, error => { settleWrite(); callback?.(error) })
    if (phase === 'ending') attempt.end()
    return result
  }
  patched.end = (...args: unknown[]) => {
    if (phase !== 'ended') return end(...args)
    const callback = args.find((argument): argument is () => void => typeof argument === 'function')
    if (callback) process.nextTick(callback)
    return response
  }
  response.once('close', onClose)
  return attempt
}

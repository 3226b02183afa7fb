import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { HooksProvider } from '@restatedev/restate-sdk'
import { trackAttempt } from './attempt-stream'
import type { AttemptStream } from './attempt-stream'

/** A Node HTTP/2 request handler, as `restate.createEndpointHandler` returns. */
export type RequestHandler = (request: Http2ServerRequest, response: Http2ServerResponse) => void

/**
 * Lets the invocation attempts of one services process finish their running steps before it exits (see
 * `installGracefulShutdown`). Each attempt is one HTTP/2 stream from Restate; a step is one `ctx.run` closure.
 *
 * Once draining, an attempt that runs a step keeps its stream until the step's result has been written to it, then
 * ends the stream: Restate journals that result and retries the attempt elsewhere, where it replays without running
 * the step again. An attempt idle at an await is ended at once. Nothing an attempt writes after its end leaves the
 * process, and a step that would start on an ended attempt never runs, so no step starts during the drain unless its
 * command was already out.
 */
export interface AttemptDrain {
  /** For `defaultServiceOptions.hooks`: counts the steps of every attempt. */
  hooks: HooksProvider
  /** Wraps the endpoint's handler: tracks the invocation streams; once draining, answers new requests 503. */
  handler(inner: RequestHandler): RequestHandler
  /** Starts draining; resolves once every invocation stream has closed. */
  drain(): Promise<void>
  /** Steps running now, all attempts together. */
  runningSteps(): number
  /** Invocation streams open now. */
  openAttempts(): number
}

/** Creates the drain of one endpoint. */
export function createAttemptDrain(): AttemptDrain {
  const attempts = new Set<AttemptStream>()
  /** The open attempt of each invocation id (Restate sends one attempt of an invocation at a time). */
  const byInvocation = new Map<string, AttemptStream>()
  let draining = false
  let runningSteps = 0
  let onClosed = (): void => undefined
  // The provider is called once per attempt as it starts. Its attempt is found by its invocation id (the stream's
  // header, recorded before the SDK sees the request), not by async context: the SDK may start a step's closure from
  // input that arrived on another stream's callback. Its completed signal aborts when the stream closes, whoever
  // closed it (this drain, or Restate while the SDK still read the journal, before the lookup): checked per step.
  const hooks: HooksProvider = ({ request }) => {
    const attempt = byInvocation.get(String(request.id))
    const completed = request.attemptCompletedSignal
    return { interceptor: { run: async (_name, next) => runStep(attempt, next, completed) } }
  }
  const runStep = async (attempt: AttemptStream | undefined, next: () => Promise<void>, completed: AbortSignal): Promise<void> => {
    // Its stream has ended: the result could not be journaled, so the step must not run (the retry runs it).
    if (completed.aborted || attempt?.phase === 'ended') return new Promise<void>(() => undefined)
    runningSteps++
    attempt?.stepStarted()
    try {
      await next()
    } finally {
      runningSteps--
      attempt?.stepFinished(draining)
    }
  }
  return {
    hooks,
    runningSteps: () => runningSteps,
    openAttempts: () => attempts.size,
    handler: inner => (request, response) => {
      if (draining) return refuse(response)
      if (request.headers['x-restate-invocation-id'] === undefined) return inner(request, response)
      const invocationId = String(request.headers['x-restate-invocation-id'])
      const attempt = trackAttempt(response, () => {
        attempts.delete(attempt)
        if (byInvocation.get(invocationId) === attempt) byInvocation.delete(invocationId)
        onClosed()
      })
      attempts.add(attempt)
      byInvocation.set(invocationId, attempt)
      inner(request, response)
    },
    drain: () => {
      draining = true
      for (const attempt of attempts) if (attempt.steps === 0) void endWhenIdle(attempt)
      return new Promise(resolve => {
        onClosed = () => { if (attempts.size === 0) resolve() }
        onClosed()
      })
    },
  }
}

/**
 * Ends an attempt that runs no step, once it has settled: a step whose run command the attempt wrote just before
 * the drain starts its closure a turn of the event loop after the write completes, and must be let finish.
 */
async function endWhenIdle(attempt: AttemptStream): Promise<void> {
  for (;;) {
    const seen = attempt.activity
    await attempt.writesFlushed()
    await nextTurn()
    await nextTurn()
    if (attempt.steps > 0 || attempt.phase !== 'open') return
    if (attempt.activity === seen) return attempt.end()
  }
}

function refuse(response: Http2ServerResponse): void {
  response.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' })
  response.end(JSON.stringify({ message: 'This services process is shutting down; retry on another one.' }))
}

export type { AttemptStream }

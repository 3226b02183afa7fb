import * as clients from '@restatedev/restate-sdk-clients'
import { GatewayError, RestateCallError } from './errors'

/** Longest a call to Restate may take unless its caller gives it a signal of its own. */
const CALL_TIMEOUT_MS = 10_000

/**
 * Restate's ingress through its typed client, with the contract's service interfaces. A request carries only what the
 * client sets (content type, idempotency key): none of the caller's headers reach Restate, which journals them.
 */
export interface RestateIngress {
  /** The client: each request ends after 10 s unless it has a signal of its own. */
  client: clients.Ingress
  /** A client whose requests end only when `signal` aborts (the SDK's `result` takes no signal itself). */
  until(signal: AbortSignal): clients.Ingress
}

/** Connects to the ingress at `url`. */
export function connectIngress(url: string): RestateIngress {
  const bounded: typeof fetch = (input, init) => fetch(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(CALL_TIMEOUT_MS) })
  return {
    client: clients.connect({ url, fetch: bounded }),
    until: signal => clients.connect({ url, fetch: (input, init) => fetch(input, { ...init, signal: init?.signal ? AbortSignal.any([init.signal, signal]) : signal }) }),
  }
}

/**
 * Makes one call to Restate: 503 `restate_unavailable` when Restate cannot be reached, the call times out or is aborted,
 * or Restate answers 503; {@link RestateCallError} for another error status.
 */
export async function restateCall<T>(call: () => PromiseLike<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (error instanceof GatewayError) throw error
    if (!(error instanceof clients.HttpCallError)) throw new GatewayError('restate_unavailable', unreachableMessage(describeFailure(error)), { cause: error })
    const { message, source } = restateErrorBody(error.responseText)
    if (error.status === 503) throw new GatewayError('restate_unavailable', `Restate is unavailable: ${message}`, { cause: error })
    throw new RestateCallError(error.status, message, source)
  }
}

/**
 * Makes a call a services process must answer, waiting at most `waitMs`: undefined when none answered in time (they
 * are down or restarting). The invocation stays in Restate, which runs it when they are back.
 */
export async function answeredWithin<T>(waitMs: number, call: (timeout: { timeout: number }) => PromiseLike<T>): Promise<T | undefined> {
  try {
    return await restateCall(() => call({ timeout: waitMs }))
  } catch (error) {
    if (error instanceof GatewayError && error.cause instanceof Error && error.cause.name === 'TimeoutError') return undefined
    throw error
  }
}

/** The `message` (and `source`) of a Restate error body; the raw text when it is not JSON. */
export function restateErrorBody(text: string): { message: string; source?: string } {
  try {
    const { message, source } = JSON.parse(text) as { message?: unknown; source?: unknown }
    return { message: typeof message === 'string' ? message : text, ...(typeof source === 'string' ? { source } : {}) }
  } catch {
    return { message: text }
  }
}

/**
 * What a client is told when a call to Restate got no answer: a call that timed out may have reached Restate and be
 * waiting there for the services (down, restarting or busy), which the bare "unreachable" hid.
 */
function unreachableMessage(reason: string): string {
  if (reason === 'timed out') return 'Restate did not answer in time (timed out): it may be waiting for the services, which may be restarting or busy; try again shortly'
  return `Restate is unreachable (${reason})`
}

/** A short reason for a failed request: `timed out`, `aborted`, or the network error's code (`ECONNREFUSED`). */
export function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  if (error.name === 'TimeoutError') return 'timed out'
  if (error.name === 'AbortError') return 'aborted'
  const cause = error.cause
  if (!(cause instanceof Error)) return error.message
  return 'code' in cause && typeof cause.code === 'string' ? cause.code : cause.message
}

/**
 * The default and longest time one held call (an attach, a waiting admission, a parked event watch) lasts before it is
 * made again: Node's `fetch` gives up on a response whose headers have not come within 300 s.
 */
export const MAX_HOLD_MS = 240_000

/**
 * Makes a call held until its answer comes, however long, until `signal` aborts: each try is given up after `renewMs`
 * and made again (Restate answers the same invocation each time). Only the renewal's own timeout is retried.
 */
export async function heldCall<T>(call: (signal: AbortSignal) => PromiseLike<T>, signal: AbortSignal, renewMs: number): Promise<T> {
  for (;;) {
    const renewal = AbortSignal.timeout(renewMs)
    try {
      return await restateCall(() => call(AbortSignal.any([signal, renewal])))
    } catch (error) {
      if (!renewal.aborted || signal.aborted) throw error
    }
  }
}

import * as restate from '@restatedev/restate-sdk'
import { isZidaneError } from 'zidane'
import { isRestateCancellation, isRestateControlError } from 'zidane/restate'

/** Library error categories that no retry can fix: a newer or corrupt session, a configuration error, a busy session. */
const TERMINAL_CATEGORIES = new Set(['configuration', 'session', 'internal'])

/** How a handler ended for good. Retryable failures are not endings: Restate retries the invocation. */
export type HandlerEnding = { kind: 'cancelled' } | { kind: 'failed'; code: string; reason: string }

/**
 * Maps what a handler threw to what Restate does with it. Restate's own errors pass through; a library error that
 * cannot succeed on retry becomes a `TerminalError` carrying its code (message `<code>: <message>`, metadata `code`);
 * anything else stays retryable.
 */
export function toRestateError(error: unknown): unknown {
  if (isRestateControlError(error)) return error
  if (isZidaneError(error) && error.retryable !== true && TERMINAL_CATEGORIES.has(error.category)) {
    return new restate.TerminalError(`${error.code}: ${error.message}`, { errorCode: error.status ?? 500, metadata: { code: error.code } })
  }
  return error
}

/** Whether `mapped` (the output of `toRestateError`) ends the invocation, and how. */
export function handlerEnding(mapped: unknown): HandlerEnding | undefined {
  if (isRestateCancellation(mapped)) return { kind: 'cancelled' }
  if (!(mapped instanceof restate.TerminalError)) return undefined
  return { kind: 'failed', code: mapped.metadata?.code ?? 'terminal_error', reason: mapped.message }
}

/**
 * The one error boundary of a handler: runs `body`; when it throws, maps the error (`toRestateError`), lets `onEnding`
 * (when given) record an ending (inside the invocation, so its state writes are journaled), then throws the mapped
 * error. A failure of `onEnding` itself never hides the original error.
 */
export async function withErrorBoundary<T>(body: () => Promise<T>, onEnding?: (ending: HandlerEnding) => Promise<void>): Promise<T> {
  try {
    return await body()
  } catch (error) {
    const mapped = toRestateError(error)
    const ending = handlerEnding(mapped)
    if (ending && onEnding) await recordEnding(onEnding, ending)
    throw mapped
  }
}

async function recordEnding(onEnding: (ending: HandlerEnding) => Promise<void>, ending: HandlerEnding): Promise<void> {
  try {
    await onEnding(ending)
  } catch (error) {
    // A Restate error (the invocation is being torn down) must still win; anything else is logged and dropped.
    if (isRestateControlError(error) && !(error instanceof restate.TerminalError)) throw error
    console.error(`zidane services: recording the end of a failed invocation failed: ${error instanceof Error ? error.message : String(error)}`)
  }
}

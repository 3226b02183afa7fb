const CONTROL_ERROR_NAMES = new Set(['RestateError', 'TerminalError', 'TimeoutError', 'CancelledError', 'RetryableError', 'PauseError', 'SuspendedError'])

/** Names of the constructors on `error`'s prototype chain, plus its own `name`. */
function errorClassNames(error: Error): Set<string> {
  const names = new Set<string>([error.name])
  for (let proto = Object.getPrototypeOf(error) as object | null; proto && proto !== Error.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
    const name = (proto as { constructor?: { name?: unknown } }).constructor?.name
    if (typeof name === 'string') names.add(name)
  }
  return names
}

function isDomException(error: unknown): boolean {
  return typeof DOMException !== 'undefined' && error instanceof DOMException
}

/**
 * Restate control-flow errors must escape the agent loop: turned into model-visible tool results, the runtime
 * would retry or suspend incorrectly. Structural (class names on the prototype chain and a numeric `code`) so
 * the SDK is not imported at run time. Platform `DOMException`s are never control errors.
 */
export function isRestateControlError(error: unknown): boolean {
  if (!(error instanceof Error) || isDomException(error)) return false
  if (typeof (error as { code?: unknown }).code !== 'number') return false
  for (const name of errorClassNames(error)) if (CONTROL_ERROR_NAMES.has(name)) return true
  return false
}

/**
 * The Restate control error behind `error`: itself, or the first one on its `.cause` chain. For code outside the
 * loop that wraps a failure in an error of its own: rethrow the original, or Restate treats it as retryable.
 */
export function restateControlError(error: unknown): Error | undefined {
  const seen = new Set<unknown>()
  for (let current: unknown = error; current !== undefined && current !== null && !seen.has(current); current = (current as { cause?: unknown }).cause) {
    seen.add(current)
    if (isRestateControlError(current)) return current as Error
  }
  return undefined
}

/**
 * The SDK's `CancelledError`: the invocation was cancelled (Admin API, a caller's `ctx.cancel`, or a cancelled
 * parent). Restate journals the cancel signal, so a replay surfaces it at the same await.
 */
export function isRestateCancellation(error: unknown): boolean {
  if (!isRestateControlError(error)) return false
  return errorClassNames(error as Error).has('CancelledError') && (error as { code?: unknown }).code === 409
}

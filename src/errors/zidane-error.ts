/** Who must act on an error: the caller's configuration, the provider, the model, a tool, a limit, a cancellation, the session, or us. */
export type ErrorCategory =
  | 'configuration'
  | 'provider'
  | 'model'
  | 'tool'
  | 'limit'
  | 'cancellation'
  | 'session'
  | 'internal'

/** Options shared by every library error. */
export interface ZidaneErrorOptions {
  readonly code: string
  readonly category: ErrorCategory
  readonly retryable?: boolean
  readonly cause?: unknown
  readonly sessionId?: string
  readonly runId?: string
  readonly status?: number
  readonly requestId?: string
}

/** Base class of every error the library throws: a stable `code`, whether a retry can help, and the session and run when known. */
export class ZidaneError extends Error {
  readonly code: string
  readonly category: ErrorCategory
  readonly retryable: boolean
  readonly sessionId: string | undefined
  readonly runId: string | undefined
  readonly status: number | undefined
  readonly requestId: string | undefined

  constructor(message: string, options: ZidaneErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = 'ZidaneError'
    this.code = options.code
    this.category = options.category
    this.retryable = options.retryable ?? false
    this.sessionId = options.sessionId
    this.runId = options.runId
    this.status = options.status
    this.requestId = options.requestId
  }
}

/** True for any library error, even one built by another copy of the package. */
export function isZidaneError(error: unknown): error is ZidaneError {
  return error instanceof Error && typeof (error as Partial<ZidaneError>).code === 'string' && typeof (error as Partial<ZidaneError>).category === 'string'
}

/** The caller configured something wrong (bad option, missing key); fix the code, do not retry. */
export class ConfigurationError extends ZidaneError {
  constructor(message: string, code = 'configuration_invalid', cause?: unknown) {
    super(message, { code, category: 'configuration', cause })
    this.name = 'ConfigurationError'
  }
}

/** The model provider failed (HTTP error, stream cut, overloaded); `retryable` says whether another attempt can help. */
export class ProviderError extends ZidaneError {
  constructor(message: string, options: Omit<ZidaneErrorOptions, 'category'>) {
    super(message, { ...options, category: 'provider' })
    this.name = 'ProviderError'
  }
}

/** A run stopped because the user or the host ended it (abort, cancellation). */
export class AgentAbortedError extends ZidaneError {
  constructor(message = 'The run was aborted.', cause?: unknown) {
    super(message, { code: 'run_aborted', category: 'cancellation', cause })
    this.name = 'AgentAbortedError'
  }
}

/** A session could not be loaded, saved or used as asked. */
export class SessionError extends ZidaneError {
  constructor(message: string, code = 'session_invalid', cause?: unknown) {
    super(message, { code, category: 'session', cause })
    this.name = 'SessionError'
  }
}

/** A durable runtime failed or found its journal in a state it cannot continue from. */
export class DurableError extends ZidaneError {
  constructor(message: string, code = 'durable_failure', cause?: unknown) {
    super(message, { code, category: 'internal', cause })
    this.name = 'DurableError'
  }
}

/** Another process took the run over; this process must stop working on it. */
export class RunTakenOverError extends ZidaneError {
  constructor(runId?: string) {
    super('this run continued in another process', { code: 'run_taken_over', category: 'cancellation', ...(runId === undefined ? {} : { runId }) })
    this.name = 'RunTakenOverError'
  }
}

import type { ScriptedError } from './types'

const errorTypeByStatus: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
}

/** The `error.type` the real API uses for an HTTP status. */
export function errorTypeForStatus(status: number): string {
  return errorTypeByStatus[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')
}

/** The JSON body of an error answer, exactly as the API shapes it. */
export function errorBody(errorType: string, message: string, requestId: string): object {
  return { type: 'error', error: { type: errorType, message }, request_id: requestId }
}

/** The extra headers a scripted error asks for (`retry-after`, `retry-after-ms`, `x-should-retry`, custom). */
export function errorHeaders(error: ScriptedError): Record<string, string> {
  const headers: Record<string, string> = { ...error.headers }
  if (error.retryAfterMs !== undefined) headers['retry-after-ms'] = String(error.retryAfterMs)
  if (error.retryAfterSeconds !== undefined) headers['retry-after'] = String(error.retryAfterSeconds)
  if (error.shouldRetry !== undefined) headers['x-should-retry'] = String(error.shouldRetry)
  return headers
}

import { APIConnectionError, APIConnectionTimeoutError, APIError } from '@anthropic-ai/sdk'
import { ProviderError } from '../../errors/zidane-error'

interface StatusRule { code: string; retryable: boolean }

/**
 * Every HTTP status the Messages API documents, with our stable code and whether another attempt can help.
 * Codes are permanent: they may sit in journals.
 */
export const anthropicStatusRules: Readonly<Record<number, StatusRule>> = {
  400: { code: 'provider_bad_request', retryable: false },
  401: { code: 'provider_unauthorized', retryable: false },
  402: { code: 'provider_payment_required', retryable: false },
  403: { code: 'provider_forbidden', retryable: false },
  404: { code: 'provider_not_found', retryable: false },
  408: { code: 'provider_timeout', retryable: true },
  409: { code: 'provider_conflict', retryable: true },
  413: { code: 'provider_request_too_large', retryable: false },
  422: { code: 'provider_unprocessable', retryable: false },
  429: { code: 'provider_rate_limited', retryable: true },
  500: { code: 'provider_internal_error', retryable: true },
  502: { code: 'provider_bad_gateway', retryable: true },
  503: { code: 'provider_unavailable', retryable: true },
  504: { code: 'provider_gateway_timeout', retryable: true },
  529: { code: 'provider_overloaded', retryable: true },
}

function ruleForStatus(status: number): StatusRule {
  return anthropicStatusRules[status] ?? (status >= 500 ? { code: 'provider_server_error', retryable: true } : { code: 'provider_http_error', retryable: false })
}

/** The server's own verdict (`x-should-retry`), which the SDK also lets override the status. */
function shouldRetryHeader(headers: Headers | undefined): boolean | undefined {
  const value = headers?.get('x-should-retry')
  return value === 'true' ? true : value === 'false' ? false : undefined
}

/** `{ requestId }` to spread into error options, or nothing when the id is unknown. */
export function withRequestId(requestId: string | null | undefined): { requestId?: string } {
  return requestId === null || requestId === undefined ? {} : { requestId }
}

function describe(error: APIError): string {
  return error.apiMessage ?? error.message
}

/** A mid-stream `event: error` (the SDK gives it no status): always retryable, since the request itself was accepted. */
function mapStreamErrorEvent(error: APIError, requestId: string | undefined): ProviderError {
  const code = error.type === 'overloaded_error' ? 'provider_overloaded' : 'provider_stream_error'
  return new ProviderError(`Anthropic stream failed: ${error.type ?? 'error'}: ${describe(error)}`, {
    code, retryable: true, cause: error, ...withRequestId(error.requestID ?? requestId),
  })
}

function mapHttpError(error: APIError & { status: number }): ProviderError {
  const rule = ruleForStatus(error.status)
  return new ProviderError(`Anthropic answered ${error.status}: ${describe(error)}`, {
    code: rule.code, retryable: shouldRetryHeader(error.headers) ?? rule.retryable, status: error.status, cause: error, ...withRequestId(error.requestID),
  })
}

/**
 * The one place SDK and transport errors become `ProviderError`s: HTTP statuses by {@link anthropicStatusRules},
 * a stream `error` event as `provider_overloaded` / `provider_stream_error`, timeouts, lost connections
 * (`provider_connection_lost`) and unparseable events (`provider_invalid_response`) as retryable. `requestId` is
 * the id of the response already received, used when the error itself carries none.
 */
export function mapAnthropicError(error: unknown, requestId?: string): ProviderError {
  if (error instanceof ProviderError) return error
  if (error instanceof APIConnectionTimeoutError) return new ProviderError('Anthropic did not answer in time', { code: 'provider_timeout', retryable: true, cause: error })
  if (error instanceof APIConnectionError) return new ProviderError(`Could not reach Anthropic: ${error.message}`, { code: 'provider_connection_failed', retryable: true, cause: error })
  if (error instanceof APIError) return typeof error.status === 'number' ? mapHttpError(error as APIError & { status: number }) : mapStreamErrorEvent(error, requestId)
  const message = error instanceof Error ? error.message : String(error)
  const code = error instanceof SyntaxError ? 'provider_invalid_response' : 'provider_connection_lost'
  return new ProviderError(`The Anthropic stream broke: ${message}`, { code, retryable: true, cause: error, ...withRequestId(requestId) })
}

import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai'
import { ProviderError } from '../../errors/zidane-error'
import { anthropicStatusRules } from '../anthropic/map-anthropic-error'

/** The same stable codes as the Anthropic provider (they may sit in journals), looked up by HTTP status. */
function ruleForStatus(status: number): { code: string; retryable: boolean } {
  return anthropicStatusRules[status] ?? (status >= 500 ? { code: 'provider_server_error', retryable: true } : { code: 'provider_http_error', retryable: false })
}

function withRequestId(requestId: string | null | undefined): { requestId?: string } {
  return requestId === null || requestId === undefined ? {} : { requestId }
}

/**
 * The one place `openai` SDK and transport errors become `ProviderError`s for an OpenAI-compatible endpoint named
 * `label`: HTTP statuses by the shared status table (429 and 5xx retryable, other 4xx terminal), an `error` object
 * inside the stream as a retryable `provider_stream_error`, timeouts and connection failures as retryable.
 */
export function mapOpenAiError(error: unknown, label: string, requestId?: string): ProviderError {
  if (error instanceof ProviderError) return error
  if (error instanceof APIConnectionTimeoutError) return new ProviderError(`${label} did not answer in time`, { code: 'provider_timeout', retryable: true, cause: error })
  if (error instanceof APIConnectionError) return new ProviderError(`Could not reach ${label}: ${error.message}`, { code: 'provider_connection_failed', retryable: true, cause: error })
  if (error instanceof APIError && typeof error.status === 'number') {
    const rule = ruleForStatus(error.status)
    return new ProviderError(`${label} answered ${error.status}: ${error.message}`, { code: rule.code, retryable: rule.retryable, status: error.status, cause: error, ...withRequestId(error.requestID ?? requestId) })
  }
  if (error instanceof APIError) return new ProviderError(`${label} stream failed: ${error.message}`, { code: 'provider_stream_error', retryable: true, cause: error, ...withRequestId(requestId) })
  const message = error instanceof Error ? error.message : String(error)
  const code = error instanceof SyntaxError ? 'provider_invalid_response' : 'provider_connection_lost'
  return new ProviderError(`The ${label} stream broke: ${message}`, { code, retryable: true, cause: error, ...withRequestId(requestId) })
}

import Anthropic from '@anthropic-ai/sdk'
import type { ClientOptions } from '@anthropic-ai/sdk'
import { ConfigurationError } from '../../errors/zidane-error'
import type { Provider, ThinkingConfig } from '../provider'
import { defaultModel, defaultPrices } from './model-prices'
import type { ModelPrices } from './model-prices'
import type { StreamSettings } from './stream-message'
import { streamMessage } from './stream-message'

/** Options of {@link anthropic}. Every field is optional; the environment fills in the key and base URL. */
export interface AnthropicOptions {
  /** Sent as `Authorization: Bearer`. Default: env `ANTHROPIC_API_KEY`; without either, construction throws. */
  apiKey?: string
  /** Default: env `ANTHROPIC_BASE_URL`, else the SDK's `https://api.anthropic.com`. */
  baseURL?: string
  /** Model used when a request names none. Default: `defaultModel` of `models.json`. */
  model?: string
  /** `max_tokens` when a request sets none. Default 8192. */
  maxTokens?: number
  /** Extended thinking when a request sets none. */
  thinking?: ThinkingConfig
  /** SDK retries of HTTP 408/409/429/5xx and connection errors before the stream starts. Default 2. */
  maxRetries?: number
  /** Abort the stream and throw a retryable `provider_stream_idle` after this long without an event. Default 60000. */
  idleTimeoutMs?: number
  /** Prices that override or extend the bundled table, by model id. */
  prices?: Readonly<Record<string, ModelPrices>>
  /** Hears about oddities that do not fail the request (an unknown stop reason). Default: `process.emitWarning`. */
  onWarning?: (message: string) => void
}

const defaultMaxTokens = 8192
const defaultIdleTimeoutMs = 60_000
const defaultMaxRetries = 2

function createClient(options: AnthropicOptions, maxRetries: number): Anthropic {
  const apiKey = options.apiKey ?? process.env['ANTHROPIC_API_KEY']
  if (apiKey === undefined || apiKey === '') {
    throw new ConfigurationError('anthropic() needs an API key: pass apiKey or set ANTHROPIC_API_KEY', 'configuration_missing_api_key')
  }
  const clientOptions: ClientOptions = { apiKey, maxRetries }
  const baseURL = options.baseURL ?? process.env['ANTHROPIC_BASE_URL']
  if (baseURL !== undefined && baseURL !== '') clientOptions.baseURL = baseURL
  return new Anthropic(clientOptions)
}

function warn(message: string): void {
  process.emitWarning(message, { code: 'ZIDANE_ANTHROPIC' })
}

/**
 * A {@link Provider} for the Anthropic Messages API through the official SDK, streaming every request. See
 * `README.md` in this folder for cache breakpoints, truncated tool calls, stop reasons and error codes.
 */
export function anthropic(options: AnthropicOptions = {}): Provider {
  const maxRetries = options.maxRetries ?? defaultMaxRetries
  const model = options.model ?? defaultModel
  const settings: StreamSettings = {
    client: createClient(options, maxRetries),
    defaults: { model, maxTokens: options.maxTokens ?? defaultMaxTokens, ...(options.thinking === undefined ? {} : { thinking: options.thinking }) },
    maxRetries,
    idleTimeoutMs: options.idleTimeoutMs ?? defaultIdleTimeoutMs,
    prices: { ...defaultPrices, ...options.prices },
    onWarning: options.onWarning ?? warn,
  }
  return { name: 'anthropic', model, stream: (request, onDelta) => streamMessage(settings, request, onDelta) }
}

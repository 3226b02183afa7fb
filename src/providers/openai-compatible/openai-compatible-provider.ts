import OpenAI from 'openai'
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions'
import { AgentAbortedError, ConfigurationError, ProviderError } from '../../errors/zidane-error'
import type { ModelDelta, ModelRequest, ModelResponse, Provider } from '../provider'
import { IdleWatchdog } from '../anthropic/idle-watchdog'
import { emptyUsage } from '../content'
import { ChatStreamAccumulator, toChatStopReason } from './chat-stream-accumulator'
import type { AccumulatedChat } from './chat-stream-accumulator'
import { chatPricesFor, computeChatCostUsd, defaultChatPrices } from './chat-prices'
import type { ChatModelPrices } from './chat-prices'
import { mapOpenAiError } from './map-openai-error'
import { toChatMessages, toChatTools } from './to-chat-messages'

/** Options of {@link openaiCompatible}. */
export interface OpenAiCompatibleOptions {
  /** The provider's name (the `openai` of `openai:gpt-4o`), in error messages and traces. Default `openai`. */
  name?: string
  /** Sent as `Authorization: Bearer`. Required (a local server that ignores keys takes any string). */
  apiKey: string
  /** The endpoint, e.g. `https://api.openai.com/v1`, `http://localhost:11434/v1`. Default: the SDK's (OpenAI). */
  baseURL?: string
  /** Model used when a request names none. */
  model: string
  /** Sent as `max_completion_tokens` (or the field `maxTokensField` names) when a request sets none; default: not sent. */
  maxTokens?: number
  /** `max_tokens` for servers that know only the older field. Default `max_completion_tokens`. */
  maxTokensField?: 'max_completion_tokens' | 'max_tokens'
  /** Send the model's own reasoning back as `reasoning_content` (DeepSeek-style servers). Default false. */
  sendReasoning?: boolean
  /** SDK retries of HTTP 408/409/429/5xx and connection errors before the stream starts. Default 2. */
  maxRetries?: number
  /** Abort the stream and throw a retryable `provider_stream_idle` after this long without a chunk. Default 60000. */
  idleTimeoutMs?: number
  /** Prices (USD per million tokens) that override or extend the bundled table, by model id. */
  prices?: Readonly<Record<string, ChatModelPrices>>
}

interface Settings {
  label: string
  client: OpenAI
  options: OpenAiCompatibleOptions
  prices: Readonly<Record<string, ChatModelPrices>>
  idleTimeoutMs: number
}

/**
 * A {@link Provider} for any OpenAI-compatible Chat Completions endpoint (OpenAI, Azure, vLLM, Ollama, OpenRouter,
 * gateways) through the official `openai` SDK, streaming every request with usage in the last chunk. See
 * `README.md` in this folder for the mapping of messages, reasoning, stop reasons and errors.
 */
export function openaiCompatible(options: OpenAiCompatibleOptions): Provider {
  const label = options.name ?? 'openai'
  if (options.apiKey === '') throw new ConfigurationError(`${label}: an OpenAI-compatible provider needs an API key`, 'configuration_missing_api_key')
  const client = new OpenAI({ apiKey: options.apiKey, maxRetries: options.maxRetries ?? 2, ...(options.baseURL ? { baseURL: options.baseURL } : {}) })
  const settings: Settings = { label, client, options, prices: { ...defaultChatPrices, ...options.prices }, idleTimeoutMs: options.idleTimeoutMs ?? 60_000 }
  return { name: label, model: options.model, stream: (request, onDelta) => streamChat(settings, request, onDelta) }
}

function chatParams(settings: Settings, request: ModelRequest): ChatCompletionCreateParamsStreaming {
  const { options } = settings
  const params: ChatCompletionCreateParamsStreaming = {
    model: request.model ?? options.model,
    messages: toChatMessages(request.system, request.messages, { sendReasoning: options.sendReasoning === true }),
    stream: true,
    stream_options: { include_usage: true },
  }
  if (request.tools.length > 0) params.tools = toChatTools(request.tools)
  const maxTokens = request.maxTokens ?? options.maxTokens
  if (maxTokens !== undefined) params[options.maxTokensField ?? 'max_completion_tokens'] = maxTokens
  return params
}

function toResponse(chat: AccumulatedChat, requestedModel: string, settings: Settings, requestId: string | undefined): ModelResponse {
  if (chat.finishReason === undefined) throw new ProviderError(`The ${settings.label} stream ended before a finish reason`, { code: 'provider_stream_incomplete', retryable: true, ...(requestId ? { requestId } : {}) })
  const usage = chat.usage ?? emptyUsage()
  const model = chat.model === '' ? requestedModel : chat.model
  const pricedModel = chatPricesFor(model, settings.prices) === undefined ? requestedModel : model
  const response: ModelResponse = { content: chat.content, stopReason: toChatStopReason(chat.finishReason, chat.content), usage, costUsd: computeChatCostUsd(usage, pricedModel, settings.prices), model }
  if (requestId !== undefined) response.requestId = requestId
  if (chat.truncatedToolUse) response.truncatedToolUse = true
  return response
}

/**
 * Sends one request as a stream and folds it into a {@link ModelResponse}. The SDK retries HTTP errors before the
 * stream starts; everything after is a `ProviderError` for the loop to retry, or `AgentAbortedError` when the
 * request's signal fired. Errors thrown by `onDelta` propagate unchanged.
 */
async function streamChat(settings: Settings, request: ModelRequest, onDelta: (delta: ModelDelta) => void): Promise<ModelResponse> {
  if (request.signal.aborted) throw new AgentAbortedError('The model request was aborted.', request.signal.reason)
  const params = chatParams(settings, request)
  const controller = new AbortController()
  const abort = (): void => controller.abort()
  request.signal.addEventListener('abort', abort, { once: true })
  const watchdog = new IdleWatchdog(settings.idleTimeoutMs, abort)
  let requestId: string | undefined
  let callbackFailure: { error: unknown } | undefined
  const accumulator = new ChatStreamAccumulator(delta => {
    try { onDelta(delta) } catch (error) { callbackFailure = { error }; throw error }
  })
  try {
    const { data: stream, request_id } = await settings.client.chat.completions.create(params, { signal: controller.signal }).withResponse()
    requestId = request_id ?? undefined
    watchdog.touch()
    for await (const chunk of stream) {
      watchdog.touch()
      accumulator.apply(chunk)
    }
    return toResponse(accumulator.finish(), params.model, settings, requestId)
  } catch (error) {
    if (callbackFailure !== undefined) throw callbackFailure.error
    if (request.signal.aborted) throw new AgentAbortedError('The model request was aborted.', error)
    if (watchdog.fired) throw new ProviderError(`The ${settings.label} stream sent nothing for ${settings.idleTimeoutMs} ms`, { code: 'provider_stream_idle', retryable: true, cause: error, ...(requestId ? { requestId } : {}) })
    throw mapOpenAiError(error, settings.label, requestId)
  } finally {
    watchdog.stop()
    request.signal.removeEventListener('abort', abort)
    controller.abort()
  }
}

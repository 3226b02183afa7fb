import { AgentAbortedError, ProviderError } from '../../errors/zidane-error'
import type { ModelDelta, ModelRequest, ModelResponse, Provider } from '../provider'
import { anthropicStatusRules } from '../anthropic/map-anthropic-error'
import { chatPricesFor, computeChatCostUsd } from '../openai-compatible/chat-prices'
import type { ChatModelPrices } from '../openai-compatible/chat-prices'
import { AiSdkStreamAccumulator, toAiSdkStopReason } from './ai-sdk-stream-accumulator'
import type { AiSdkCallOptions, AiSdkFileData, AiSdkLanguageModel, AiSdkModelOf } from './language-model'
import { toAiSdkPrompt } from './to-ai-sdk-prompt'

/** Options of {@link aiSdkModel}. */
export interface AiSdkModelOptions {
  /** The provider's name in `provider:model` and in errors. Default: the model's `provider` id. */
  name?: string
  /** Prices (USD per million tokens) by model id; an unknown model costs 0. */
  prices?: Readonly<Record<string, ChatModelPrices>>
  /** `maxOutputTokens` when a request sets none; default: not sent. */
  maxTokens?: number
  /**
   * Another model of the same provider package for a request that names one (`openai:gpt-4o-mini`). Without it, every
   * request goes to `model`, whatever it names.
   */
  modelFor?: (modelId: string) => AiSdkLanguageModel
}

/**
 * A {@link Provider} over any AI SDK language model (`LanguageModelV3` or `V4`, as every `@ai-sdk/*` provider package
 * makes): streams with `doStream`, reports text, reasoning and tool-input deltas, folds tool calls, usage and cost.
 * The package's own retries and errors stay its own; its `APICallError` is mapped to our codes by status.
 */
export function aiSdkModel(model: AiSdkLanguageModel, options: AiSdkModelOptions = {}): Provider {
  const label = options.name ?? model.provider
  return {
    name: label,
    model: model.modelId,
    stream: (request, onDelta) => {
      const target = request.model !== undefined && request.model !== model.modelId && options.modelFor ? options.modelFor(request.model) : model
      return streamModel(target, label, options, request, onDelta)
    },
  }
}

function callOptions(model: AiSdkLanguageModel, options: AiSdkModelOptions, request: ModelRequest): AiSdkCallOptions {
  const call: AiSdkCallOptions = { prompt: toAiSdkPrompt(request.system, request.messages, model.specificationVersion), abortSignal: request.signal }
  if (request.tools.length > 0) call.tools = request.tools.map(tool => ({ type: 'function', name: tool.name, description: tool.description, inputSchema: { ...tool.inputSchema, type: 'object' } }))
  const maxTokens = request.maxTokens ?? options.maxTokens
  if (maxTokens !== undefined) call.maxOutputTokens = maxTokens
  return call
}

async function streamModel(model: AiSdkLanguageModel, label: string, options: AiSdkModelOptions, request: ModelRequest, onDelta: (delta: ModelDelta) => void): Promise<ModelResponse> {
  if (request.signal.aborted) throw new AgentAbortedError('The model request was aborted.', request.signal.reason)
  let callbackFailure: { error: unknown } | undefined
  const accumulator = new AiSdkStreamAccumulator(delta => {
    try { onDelta(delta) } catch (error) { callbackFailure = { error }; throw error }
  }, label)
  try {
    // The prompt's file data was built for this model's version (`toAiSdkPrompt`).
    const { stream } = await (model as AiSdkModelOf<'v4', AiSdkFileData & object>).doStream(callOptions(model, options, request) as AiSdkCallOptions<AiSdkFileData & object>)
    const reader = stream.getReader()
    for (let next = await reader.read(); !next.done; next = await reader.read()) accumulator.apply(next.value)
    const folded = accumulator.finish()
    if (folded.finishReason === undefined || folded.finishReason === 'interrupted' || folded.finishReason === 'error') {
      throw new ProviderError(`The ${label} stream ended without finishing (${folded.finishReason ?? 'no finish part'})`, { code: 'provider_stream_incomplete', retryable: true })
    }
    const servedModel = folded.modelId ?? model.modelId
    const prices = options.prices ?? {}
    const pricedModel = chatPricesFor(servedModel, prices) === undefined ? model.modelId : servedModel
    return { content: folded.content, stopReason: toAiSdkStopReason(folded.finishReason, folded.content), usage: folded.usage, costUsd: computeChatCostUsd(folded.usage, pricedModel, prices), model: servedModel }
  } catch (error) {
    if (callbackFailure !== undefined) throw callbackFailure.error
    if (request.signal.aborted) throw new AgentAbortedError('The model request was aborted.', error)
    throw mapAiSdkError(error, label)
  }
}

/** An AI SDK `APICallError` (`statusCode`, `isRetryable`) by our status table; anything else a retryable connection loss. */
export function mapAiSdkError(error: unknown, label: string): ProviderError {
  if (error instanceof ProviderError) return error
  const call = error as { statusCode?: unknown; isRetryable?: unknown; message?: unknown }
  const message = typeof call.message === 'string' ? call.message : String(error)
  if (typeof call.statusCode === 'number' && call.statusCode >= 400) {
    const rule = anthropicStatusRules[call.statusCode] ?? (call.statusCode >= 500 ? { code: 'provider_server_error', retryable: true } : { code: 'provider_http_error', retryable: false })
    return new ProviderError(`${label} answered ${call.statusCode}: ${message}`, { code: rule.code, retryable: rule.retryable, status: call.statusCode, cause: error })
  }
  return new ProviderError(`The ${label} stream broke: ${message}`, { code: 'provider_connection_lost', retryable: true, cause: error })
}

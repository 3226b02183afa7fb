import type Anthropic from '@anthropic-ai/sdk'
import { AgentAbortedError, ProviderError } from '../../errors/zidane-error'
import type { ZidaneError } from '../../errors/zidane-error'
import type { ModelDelta, ModelRequest, ModelResponse } from '../provider'
import { toStopReason, toUsage } from './from-wire'
import { IdleWatchdog } from './idle-watchdog'
import { mapAnthropicError, withRequestId } from './map-anthropic-error'
import { computeCostUsd, pricesFor } from './model-prices'
import type { PriceTable } from './model-prices'
import type { AccumulatedMessage } from './stream-accumulator'
import { StreamAccumulator } from './stream-accumulator'
import type { WireDefaults } from './to-wire-request'
import { toWireRequest } from './to-wire-request'
import { readWireEvents } from './wire-events'

/** Everything one provider instance needs to stream a request. */
export interface StreamSettings {
  client: Anthropic
  defaults: WireDefaults
  maxRetries: number
  idleTimeoutMs: number
  prices: PriceTable
  onWarning: (message: string) => void
}

interface Outcome { idle: boolean; aborted: boolean; requestId: string | undefined }

function classify(error: unknown, outcome: Outcome, idleTimeoutMs: number): ZidaneError {
  if (outcome.aborted) return new AgentAbortedError('The model request was aborted.', error)
  if (outcome.idle) {
    return new ProviderError(`The Anthropic stream sent nothing for ${idleTimeoutMs} ms`, { code: 'provider_stream_idle', retryable: true, cause: error, ...withRequestId(outcome.requestId) })
  }
  return mapAnthropicError(error, outcome.requestId)
}

function toModelResponse(message: AccumulatedMessage, requestedModel: string, settings: StreamSettings, requestId: string | undefined): ModelResponse {
  const usage = toUsage(message.usage)
  const model = message.model === '' ? requestedModel : message.model
  const pricedModel = pricesFor(model, settings.prices) === undefined ? requestedModel : model
  const response: ModelResponse = {
    content: message.content,
    stopReason: toStopReason(message.rawStopReason, message.content, settings.onWarning),
    usage,
    costUsd: computeCostUsd(usage, pricedModel, settings.prices),
    model,
  }
  if (requestId !== undefined) response.requestId = requestId
  if (message.truncatedToolUse) response.truncatedToolUse = true
  return response
}

/**
 * Sends one request as a stream and folds it into a {@link ModelResponse}. The SDK retries HTTP errors before the
 * stream starts; everything after is classified into a `ProviderError` (or `AgentAbortedError` when the request's
 * signal fired) for the loop to retry. Errors thrown by `onDelta` propagate unchanged.
 */
export async function streamMessage(settings: StreamSettings, request: ModelRequest, onDelta: (delta: ModelDelta) => void): Promise<ModelResponse> {
  if (request.signal.aborted) throw new AgentAbortedError('The model request was aborted.', request.signal.reason)
  const params = toWireRequest(request, settings.defaults)
  const controller = new AbortController()
  const abort = (): void => controller.abort()
  request.signal.addEventListener('abort', abort, { once: true })
  const watchdog = new IdleWatchdog(settings.idleTimeoutMs, abort)
  let requestId: string | undefined
  let callbackFailure: { error: unknown } | undefined
  const accumulator = new StreamAccumulator(delta => {
    try {
      onDelta(delta)
    } catch (error) {
      callbackFailure = { error }
      throw error
    }
  })
  try {
    const response = await settings.client.messages.create({ ...params, stream: true }, { signal: controller.signal, maxRetries: settings.maxRetries }).asResponse()
    requestId = response.headers.get('request-id') ?? undefined
    watchdog.touch()
    for await (const event of readWireEvents(response, controller, () => watchdog.touch())) accumulator.apply(event)
    return toModelResponse(accumulator.finish(), params.model, settings, requestId)
  } catch (error) {
    if (callbackFailure !== undefined) throw callbackFailure.error
    throw classify(error, { idle: watchdog.fired, aborted: request.signal.aborted, requestId }, settings.idleTimeoutMs)
  } finally {
    watchdog.stop()
    request.signal.removeEventListener('abort', abort)
    controller.abort()
  }
}

import { AgentAbortedError, isZidaneError } from '../errors/zidane-error'
import type { Message } from '../providers/content'
import type { ModelRequest, ModelResponse, Provider, ToolSpec } from '../providers/provider'
import { attemptDeltaSink } from './model-attempt'
import type { AttemptDelta } from './model-attempt'
import type { AgentBehavior } from './types'
import type { RunState } from './run-state'

/** A failed model request as the journal records it. */
export interface ModelStepError {
  code: string
  message: string
  retryable: boolean
  status?: number
  requestId?: string
}

/**
 * What one model step journals: the loop's decision before the request (request, or stop on a limit) and the
 * response with its usage and cost, so a replay neither asks the model again nor bills it twice.
 */
export type ModelStepRecord =
  | { decision: 'request'; response: ModelResponse; startedAt: number; endedAt: number; attempts: number }
  | { decision: 'stop'; status: 'limit' | 'timeout'; reason: string; at: number }
  | { decision: 'error'; error: ModelStepError; attempts: number; at: number }

/** Inputs of a model step that are not part of the run state. */
export interface ModelStepInput {
  provider: Provider
  system: string | undefined
  messages: Message[]
  tools: ToolSpec[]
  behavior: AgentBehavior
  signal: AbortSignal
  /** Receives every delta with its attempt id (new for each request attempt, retries included) and offset. */
  onDelta: (delta: AttemptDelta) => void
}

/** Checks the wall-clock and cost budgets right before a request; returns the stop decision or `undefined`. */
export function checkBudgets(state: RunState, now: number): ModelStepRecord | undefined {
  const { maxWallMs, maxCostUsd } = state.limits
  if (maxWallMs !== undefined && now - state.startedAt >= maxWallMs) {
    return { decision: 'stop', status: 'timeout', reason: `maxWallMs ${maxWallMs} reached after ${now - state.startedAt} ms`, at: now }
  }
  if (maxCostUsd !== undefined && state.totals.costUsd + state.lastModelCostUsd > maxCostUsd) {
    const spent = state.totals.costUsd.toFixed(6)
    return { decision: 'stop', status: 'limit', reason: `maxCostUsd ${maxCostUsd} would be exceeded: $${spent} spent, next request estimated at $${state.lastModelCostUsd.toFixed(6)}`, at: now }
  }
  return undefined
}

/** Runs the model request with the loop's bounded retry policy for retryable failures (mid-stream errors, overload, stalls). */
export async function executeModelStep(state: RunState, input: ModelStepInput): Promise<ModelStepRecord> {
  const stop = checkBudgets(state, Date.now())
  if (stop) return stop
  const retries = input.behavior.modelRetries ?? 2
  const startedAt = Date.now()
  for (let attempt = 1; ; attempt++) {
    try {
      const response = await input.provider.stream(buildRequest(state, input), attemptDeltaSink(input.onDelta))
      return { decision: 'request', response, startedAt, endedAt: Date.now(), attempts: attempt }
    } catch (error) {
      if (input.signal.aborted) throw new AgentAbortedError('The model request was stopped.', error)
      const failure = toStepError(error)
      if (!failure.retryable || attempt > retries) return { decision: 'error', error: failure, attempts: attempt, at: Date.now() }
      await delay((input.behavior.modelRetryDelayMs ?? 500) * 2 ** (attempt - 1), input.signal)
    }
  }
}

function buildRequest(state: RunState, input: ModelStepInput): ModelRequest {
  const request: ModelRequest = { messages: input.messages, tools: input.tools, signal: input.signal }
  const model = state.limits.model ?? input.behavior.model
  if (model !== undefined) request.model = model
  if (input.system !== undefined) request.system = input.system
  if (input.behavior.maxTokens !== undefined) request.maxTokens = input.behavior.maxTokens
  if (input.behavior.cache !== undefined) request.cache = input.behavior.cache
  if (input.behavior.thinking !== undefined) request.thinking = input.behavior.thinking
  return request
}

function toStepError(error: unknown): ModelStepError {
  if (isZidaneError(error)) {
    const failure: ModelStepError = { code: error.code, message: error.message, retryable: error.retryable }
    if (error.status !== undefined) failure.status = error.status
    if (error.requestId !== undefined) failure.requestId = error.requestId
    return failure
  }
  const message = error instanceof Error ? error.message : String(error)
  return { code: 'provider_failed', message, retryable: false }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new AgentAbortedError())
    const timer = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve() }, ms)
    const onAbort = (): void => { clearTimeout(timer); reject(new AgentAbortedError()) }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}

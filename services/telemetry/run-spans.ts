import type { AgentHooks, AgentStats } from 'zidane'
import type { RunTraceContext } from './trace-context'
import type { SpanAttributeValue, SpanRecord } from './span-record'

/** What every span of one agent invocation carries: where it goes and whom it is about. */
export interface RunSpanScope {
  trace: RunTraceContext
  /** The session (or sub-agent tree) key: `<tenant>~<sessionId>`. */
  sessionKey: string
  invocationId: string
  /** `gen_ai.agent.name`: `zidane` for a session's run, the sub-agent's type or label for a sub-agent. */
  agentName: string
  /** The provider (`gen_ai.provider.name`) and its default model (the request's when the run names none). */
  provider: { name: string; model: string }
}

/** Cost of a model step in USD, as the run's ledger counts it (not a GenAI convention: ours, see docs/traces.md). */
export const COST_ATTRIBUTE = 'zidane.cost_usd'

type HookEvent<N extends keyof AgentHooks> = Parameters<AgentHooks[N]>[0]

/** Attributes every span of `scope` carries. */
function common(scope: RunSpanScope, runId: string): Record<string, SpanAttributeValue> {
  return {
    'gen_ai.conversation.id': scope.sessionKey,
    'zidane.session.key': scope.sessionKey,
    'restate.invocation.id': scope.invocationId,
    'zidane.run.id': runId,
  }
}

/**
 * The `chat` span of a model step that ran (`model:executed`), or undefined for a step that stopped on a limit before
 * asking the model. Input tokens count every input token, cached ones included (as the GenAI conventions ask); the
 * cache reads and writes are also given apart.
 */
export function chatSpan(scope: RunSpanScope, event: HookEvent<'model:executed'>): SpanRecord | undefined {
  const { record } = event
  if (record.decision === 'stop') return undefined
  const { provider, model } = providerAndModel(event.model ?? scope.provider.model, scope.provider.name)
  const attributes: Record<string, SpanAttributeValue> = {
    ...common(scope, event.runId),
    'gen_ai.operation.name': 'chat',
    'gen_ai.provider.name': provider,
    'gen_ai.request.model': model,
    'zidane.turn': event.turn,
    'zidane.model.attempts': record.attempts,
  }
  const span = { name: `chat ${model}`, traceId: scope.trace.traceId, parentSpanId: scope.trace.agentSpanId, attributes }
  if (record.decision === 'error') return { ...span, startMs: record.at, endMs: record.at, attributes: { ...attributes, 'error.type': record.error.code }, error: record.error.message }
  const { usage, costUsd } = record.response
  Object.assign(attributes, {
    'gen_ai.response.model': record.response.model,
    'gen_ai.response.finish_reasons': [record.response.stopReason],
    'gen_ai.usage.input_tokens': usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
    'gen_ai.usage.cache_read.input_tokens': usage.cacheReadTokens,
    'gen_ai.usage.cache_creation.input_tokens': usage.cacheWriteTokens,
    [COST_ATTRIBUTE]: costUsd,
  }, record.response.requestId === undefined ? {} : { 'gen_ai.response.id': record.response.requestId })
  return { ...span, startMs: record.startedAt, endMs: record.endedAt }
}

/** The `execute_tool` span of a tool call whose step ran (`tool:executed`). */
export function toolSpan(scope: RunSpanScope, event: HookEvent<'tool:executed'>): SpanRecord {
  const attributes: Record<string, SpanAttributeValue> = {
    ...common(scope, event.runId),
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': event.name,
    'gen_ai.tool.call.id': event.callId,
    'gen_ai.tool.type': 'function',
    'zidane.turn': event.turn,
    'zidane.tool.interrupted': event.interrupted,
  }
  const span: SpanRecord = { name: `execute_tool ${event.name}`, traceId: scope.trace.traceId, parentSpanId: scope.trace.agentSpanId, startMs: event.startedAt, endMs: event.endedAt, attributes }
  if (event.isError) return { ...span, attributes: { ...attributes, 'error.type': event.interrupted ? 'interrupted' : 'tool_error' }, error: 'the call ended with an error result' }
  return span
}

/** A model named `provider:model` (routed to another provider than the default) split in two; a bare name is the default provider's. */
function providerAndModel(name: string, defaultProvider: string): { provider: string; model: string } {
  const colon = name.indexOf(':')
  return colon > 0 ? { provider: name.slice(0, colon), model: name.slice(colon + 1) } : { provider: defaultProvider, model: name }
}

/**
 * The `invoke_agent` span of a finished run, under the attempt's Restate span when there is one. Its totals (children
 * included) are `zidane.run.*`, not `gen_ai.usage.*`: the tokens are counted once, on the `chat` spans.
 */
export function agentSpan(scope: RunSpanScope, stats: AgentStats): SpanRecord {
  const attributes: Record<string, SpanAttributeValue> = {
    ...common(scope, stats.runId),
    'gen_ai.operation.name': 'invoke_agent',
    'gen_ai.agent.name': scope.agentName,
    'gen_ai.agent.id': stats.runId,
    'gen_ai.provider.name': scope.provider.name,
    'zidane.run.status': stats.status,
    'zidane.run.turns': stats.turns,
    'zidane.run.model_requests': stats.modelRequests,
    'zidane.run.tool_calls': stats.toolCalls,
    'zidane.run.input_tokens': stats.usage.inputTokens + stats.usage.cacheReadTokens + stats.usage.cacheWriteTokens,
    'zidane.run.output_tokens': stats.usage.outputTokens,
    'zidane.run.cost_usd': stats.costUsd,
  }
  const failed = stats.status === 'error' || stats.status === 'timeout' || stats.status === 'limit'
  const span: SpanRecord = { name: `invoke_agent ${scope.agentName}`, traceId: scope.trace.traceId, spanId: scope.trace.agentSpanId, startMs: stats.startedAt, endMs: stats.endedAt, attributes }
  if (scope.trace.parentSpanId !== undefined) span.parentSpanId = scope.trace.parentSpanId
  return failed ? { ...span, attributes: { ...attributes, 'error.type': stats.status }, error: stats.reason ?? stats.status } : span
}

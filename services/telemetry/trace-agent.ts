import type { Agent } from 'zidane'
import { agentSpan, chatSpan, toolSpan } from './run-spans'
import type { RunSpanScope } from './run-spans'
import type { SpanSink } from './span-record'
import { runTraceContext } from './trace-context'
import type { TracedRequest } from './trace-context'

/** Whom an agent invocation's spans are about, besides its trace (read from the request). */
export type AgentTraceScope = Omit<RunSpanScope, 'trace' | 'invocationId'>

/**
 * Exports the spans of `agent`'s run in the invocation of `request` to `sink` (none when tracing is off), and returns
 * the run's trace id, which the run keeps in its record either way. `chat` and `execute_tool` spans come from the
 * hooks that fire inside the steps (`model:executed`, `tool:executed`): once per real execution, never for a step
 * replayed from the journal, so a replay neither repeats nor bills a step twice. `invoke_agent` comes at `run:end`.
 * The hooks only touch the sink, never the Restate context, and never throw.
 */
export function traceAgentRun(agent: Pick<Agent, 'hooks'>, sink: SpanSink | undefined, request: TracedRequest, scope: AgentTraceScope): string {
  const full: RunSpanScope = { ...scope, trace: runTraceContext(request), invocationId: request.id }
  if (!sink) return full.trace.traceId
  agent.hooks.hook('model:executed', event => {
    const span = chatSpan(full, event)
    if (span) sink.emit(span)
  })
  agent.hooks.hook('tool:executed', event => { sink.emit(toolSpan(full, event)) })
  agent.hooks.hook('run:end', ({ stats }) => { sink.emit(agentSpan(full, stats)) })
  return full.trace.traceId
}

import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { AgentStats } from 'zidane'
import { createMemoryJournal, createMemoryJournalRuntime, scriptedProvider, SimulatedCrashError } from 'zidane/testing'
import { agentSpan, chatSpan, COST_ATTRIBUTE, toolSpan } from '../../../services/telemetry/run-spans'
import type { RunSpanScope } from '../../../services/telemetry/run-spans'
import type { SpanRecord } from '../../../services/telemetry/span-record'
import { traceAgentRun } from '../../../services/telemetry/trace-agent'
import { runTraceContext } from '../../../services/telemetry/trace-context'
import { countingTool } from '../../helpers/tools'

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
const request = (id: string, traceparent?: string) => ({ id, attemptHeaders: new Map(traceparent ? [['traceparent', traceparent]] : []) })
const scope: RunSpanScope = { trace: runTraceContext(request('inv_1', TRACEPARENT)), sessionKey: 'tenant~s1', invocationId: 'inv_1', agentName: 'zidane', provider: { name: 'anthropic', model: 'claude-default' } }
const usage = { inputTokens: 40, outputTokens: 8, cacheReadTokens: 5, cacheWriteTokens: 2 }

describe('trace context', () => {
  it('joins the trace Restate propagates, under the attempt span', () => {
    expect(scope.trace).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', parentSpanId: 'b7ad6b7169203331' })
    expect(scope.trace.agentSpanId).toMatch(/^[0-9a-f]{16}$/)
  })

  it('derives the trace from the invocation id without one: the same on every attempt, different per invocation', () => {
    const first = runTraceContext(request('inv_1'))
    expect(first.traceId).toMatch(/^[0-9a-f]{32}$/)
    expect(first.parentSpanId).toBeUndefined()
    expect(runTraceContext(request('inv_1'))).toEqual(first)
    expect(runTraceContext(request('inv_2')).traceId).not.toBe(first.traceId)
    expect(runTraceContext(request('inv_1', '00-00000000000000000000000000000000-b7ad6b7169203331-01')).traceId).toBe(first.traceId)
    // Only the attempt's span differs between attempts: the agent span keeps its id.
    expect(runTraceContext(request('inv_1', TRACEPARENT)).agentSpanId).toBe(first.agentSpanId)
  })
})

describe('span mapping', () => {
  it('maps an executed model step to a chat span with its model, usage and cost', () => {
    const span = chatSpan(scope, { runId: 'run_1', turn: 2, model: undefined, record: { decision: 'request', startedAt: 1_000, endedAt: 1_500, attempts: 1, response: { content: [], stopReason: 'tool_use', usage, costUsd: 0.0012, model: 'claude-served', requestId: 'req_1' } } })
    expect(span).toMatchObject({ name: 'chat claude-default', traceId: scope.trace.traceId, parentSpanId: scope.trace.agentSpanId, startMs: 1_000, endMs: 1_500 })
    expect(span?.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-default',
      'gen_ai.response.model': 'claude-served',
      'gen_ai.usage.input_tokens': 47,
      'gen_ai.usage.output_tokens': 8,
      'gen_ai.usage.cache_read.input_tokens': 5,
      [COST_ATTRIBUTE]: 0.0012,
      'zidane.session.key': 'tenant~s1',
      'restate.invocation.id': 'inv_1',
      'zidane.run.id': 'run_1',
    })
  })

  it('names the provider a provider:model routes to, not the default one', () => {
    const span = chatSpan(scope, { runId: 'run_1', turn: 1, model: 'openai:gpt-e2e', record: { decision: 'request', startedAt: 1_000, endedAt: 1_200, attempts: 1, response: { content: [], stopReason: 'end_turn', usage, costUsd: 0.001, model: 'gpt-e2e', requestId: 'req_2' } } })
    expect(span).toMatchObject({ name: 'chat gpt-e2e', attributes: { 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': 'gpt-e2e' } })
  })

  it('gives a failed request an error span without usage, and a step stopped by a limit none', () => {
    const failed = chatSpan(scope, { runId: 'run_1', turn: 1, model: 'claude-x', record: { decision: 'error', error: { code: 'overloaded', message: 'busy', retryable: true }, attempts: 3, at: 2_000 } })
    expect(failed).toMatchObject({ error: 'busy', attributes: { 'error.type': 'overloaded', 'gen_ai.request.model': 'claude-x' } })
    expect(failed?.attributes['gen_ai.usage.input_tokens']).toBeUndefined()
    expect(chatSpan(scope, { runId: 'run_1', turn: 1, model: undefined, record: { decision: 'stop', status: 'limit', reason: 'budget', at: 2_000 } })).toBeUndefined()
  })

  it('maps an executed tool call to an execute_tool span', () => {
    const span = toolSpan(scope, { runId: 'run_1', turn: 1, callId: 'toolu_1', name: 'shell', startedAt: 10, endedAt: 20, isError: true, interrupted: true })
    expect(span).toMatchObject({ name: 'execute_tool shell', startMs: 10, endMs: 20, error: expect.any(String) as string, attributes: { 'gen_ai.tool.name': 'shell', 'gen_ai.tool.call.id': 'toolu_1', 'error.type': 'interrupted' } })
  })

  it('maps a finished run to the invoke_agent span, with its totals outside gen_ai.usage', () => {
    const stats: AgentStats = { runId: 'run_1', sessionId: 'tenant~s1', status: 'completed', suspended: false, turns: 2, toolCalls: 1, modelRequests: 2, usage, costUsd: 0.5, wallMs: 100, startedAt: 100, endedAt: 200, text: 'ok' }
    const span = agentSpan(scope, stats)
    expect(span).toMatchObject({ name: 'invoke_agent zidane', spanId: scope.trace.agentSpanId, parentSpanId: 'b7ad6b7169203331', startMs: 100, endMs: 200, attributes: { 'gen_ai.agent.name': 'zidane', 'zidane.run.input_tokens': 47, 'zidane.run.cost_usd': 0.5 } })
    expect(Object.keys(span.attributes).filter(key => key.startsWith('gen_ai.usage'))).toEqual([])
  })
})

describe('spans of a run that crashed and resumed', () => {
  it('emits one chat span per request the model served and none for replayed steps', async () => {
    const journal = createMemoryJournal()
    const provider = scriptedProvider([
      { toolCalls: [{ name: 'charge_card', input: {} }], usage: { inputTokens: 40, outputTokens: 8 } },
      { toolCalls: [{ name: 'read_balance', input: {} }], usage: { inputTokens: 60, outputTokens: 9 } },
      { text: 'done', usage: { inputTokens: 80, outputTokens: 5 } },
    ])
    const ledger: string[] = []
    const tools = [countingTool('charge_card', ledger), countingTool('read_balance', ledger, { safe: true })]
    const spans: SpanRecord[] = []
    const sink = { emit: (span: SpanRecord) => { spans.push(span) } }
    const traced = (crashAt?: { step: string; when: 'before' }) => {
      const agent = createAgent({ provider, tools, durable: { runtime: createMemoryJournalRuntime({ journal, ...(crashAt ? { crashAt } : {}) }), onInterrupted: 'resume' }, sessionId: 's1' })
      traceAgentRun(agent, sink, request('inv_1'), { sessionKey: 's1', agentName: 'zidane', provider })
      return agent
    }
    await expect(traced({ step: '/t3/model', when: 'before' }).run({ prompt: 'pay' })).rejects.toBeInstanceOf(SimulatedCrashError)
    expect(await traced().resume()).toMatchObject({ status: 'completed' })
    const chats = spans.filter(span => span.attributes['gen_ai.operation.name'] === 'chat')
    expect(chats.map(span => span.attributes['zidane.turn'])).toEqual([1, 2, 3])
    expect(chats.reduce((sum, span) => sum + Number(span.attributes['gen_ai.usage.input_tokens']), 0)).toBe(180)
    expect(provider.requests).toHaveLength(3)
    expect(spans.filter(span => span.attributes['gen_ai.operation.name'] === 'execute_tool').map(span => span.attributes['gen_ai.tool.name'])).toEqual(['charge_card', 'read_balance'])
    expect(spans.filter(span => span.attributes['gen_ai.operation.name'] === 'invoke_agent')).toHaveLength(1)
  })
})

import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { start } from '../../support/anthropic-server'
import type { FakeAnthropicServer, RecordedRequest, ScriptedResponse } from '../../support/anthropic-server'
import { startOtlpReceiver } from '../helpers/otlp-receiver'
import type { OtlpReceiver, ReceivedSpan } from '../helpers/otlp-receiver'
import { waitFor as pollUntilDefined } from '../helpers/restate/restate-harness'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

const API_KEY = 'sk-ant-e2e'

interface WireMessage { role: string; content: string | Array<{ type: string; text?: string }> }
const messagesOf = (request: RecordedRequest): WireMessage[] => (request.body?.messages as unknown as WireMessage[] | undefined) ?? []
const promptOf = (request: RecordedRequest): string => {
  const first = messagesOf(request)[0]
  return typeof first?.content === 'string' ? first.content : (first?.content ?? []).map(block => block.text ?? '').join('')
}
const turnOf = (request: RecordedRequest): number => messagesOf(request).filter(message => message.role === 'assistant').length

function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 120_000): Promise<T> {
  return pollUntilDefined(probe, timeoutMs, 'the e2e condition')
}

/**
 * Traces on the real stack: the services export to an OTLP/HTTP receiver in this test, Restate exports its own spans
 * (to a port where nothing listens: what matters is the trace context it hands the services). Each run is one trace
 * with one span per model call and per tool call, and its input tokens add up to the model server's own ledger of what
 * it served, also for a run whose services were killed mid-turn and resumed.
 */
describe('traces of runs', { timeout: 180_000 }, () => {
  let stack: TestStack | undefined
  let model: FakeAnthropicServer | undefined
  let receiver: OtlpReceiver | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  const r = (): OtlpReceiver => { if (!receiver) throw new Error('no receiver'); return receiver }
  printStackOutputOnFailure(() => stack)
  /** The model server's usage ledger: the input tokens of every message it served, per prompt. */
  const served: Array<{ prompt: string; inputTokens: number }> = []
  let sideEffects = ''

  const serve = (request: RecordedRequest, response: ScriptedResponse & { kind: 'message' }): ScriptedResponse => {
    served.push({ prompt: promptOf(request), inputTokens: response.usage?.input_tokens ?? 0 })
    return response
  }

  beforeAll(async () => {
    receiver = await startOtlpReceiver()
    model = await start({ apiKey: API_KEY })
    model.setHandler(request => {
      const prompt = promptOf(request)
      const turn = turnOf(request)
      const command = prompt === 'crash-traced' ? `echo ran >> ${sideEffects}; sleep 4` : 'echo traced'
      if (turn === 0) return serve(request, { kind: 'message', content: [{ type: 'tool_use', name: 'shell', input: { command } }], usage: { input_tokens: 40 + prompt.length, output_tokens: 8 } })
      return serve(request, { kind: 'message', content: [{ type: 'text', text: 'done' }], usage: { input_tokens: 70, output_tokens: 5 } })
    })
    stack = await startTestStack({
      ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_BASE_URL: model.url, ZIDANE_MODEL: 'claude-test', ZIDANE_SANDBOX: 'off',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '50',
      RESTATE_TRACING_ENDPOINT: 'http://127.0.0.1:9',
    }, { tenants: 1 })
    sideEffects = join(s().sharedDir, 'side-effects.log')
  }, 120_000)
  afterAll(async () => {
    await stack?.destroy()
    await model?.close()
    await receiver?.close()
  })

  const spansOf = (sessionId: string): ReceivedSpan[] => r().spans.filter(span => String(span.attributes['zidane.session.key']).endsWith(`~${sessionId}`))
  const operation = (spans: ReceivedSpan[], name: string): ReceivedSpan[] => spans.filter(span => span.attributes['gen_ai.operation.name'] === name)
  const inputTokens = (spans: ReceivedSpan[]): number => spans.reduce((sum, span) => sum + Number(span.attributes['gen_ai.usage.input_tokens'] ?? 0), 0)
  const ledgerOf = (prompt: string): number => served.filter(entry => entry.prompt === prompt).reduce((sum, entry) => sum + entry.inputTokens, 0)
  const view = async (sessionId: string): Promise<{ status: string; runs: Array<{ traceId?: string }> } | undefined> => {
    const response = await s().request(`/v1/sessions/${sessionId}`)
    return response.status === 200 ? (await response.json()) as { status: string; runs: Array<{ traceId?: string }> } : undefined
  }
  /** The run's spans once its `invoke_agent` span arrived (it comes last). */
  const finishedRun = async (sessionId: string): Promise<ReceivedSpan[]> => {
    await waitFor(async () => ((await view(sessionId))?.status === 'completed' ? true : undefined))
    return waitFor(() => (operation(spansOf(sessionId), 'invoke_agent').length > 0 ? spansOf(sessionId) : undefined))
  }

  const expectOneTracePerRun = async (sessionId: string, spans: ReceivedSpan[]): Promise<void> => {
    const agent = operation(spans, 'invoke_agent')
    expect(agent).toHaveLength(1)
    const traceId = agent[0]?.traceId
    expect(new Set(spans.map(span => span.traceId))).toEqual(new Set([traceId]))
    // Joined to Restate's invocation span: the agent span hangs under the attempt span Restate propagated.
    expect(agent[0]?.parentSpanId).toMatch(/^[0-9a-f]{16}$/)
    for (const span of [...operation(spans, 'chat'), ...operation(spans, 'execute_tool')]) expect(span.parentSpanId).toBe(agent[0]?.spanId)
    const invocations = new Set(spans.map(span => span.attributes['restate.invocation.id']))
    expect(invocations.size).toBe(1)
    expect([...invocations][0]).toMatch(/^inv_/)
    // The run record names the trace, for a viewer to link to.
    expect((await view(sessionId))?.runs.at(-1)?.traceId).toBe(traceId)
  }

  it('exports one trace per run: a chat span per model call, an execute_tool span per tool call, the ledger\'s tokens', async () => {
    const accepted = await s().request('/v1/sessions/traced/prompts', { method: 'POST', body: JSON.stringify({ prompt: 'traced' }) })
    expect(accepted.status).toBe(202)
    const spans = await finishedRun('traced')
    await expectOneTracePerRun('traced', spans)
    const chats = operation(spans, 'chat')
    expect(chats.map(span => span.attributes['zidane.turn']).sort()).toEqual([1, 2])
    expect(chats.every(span => span.attributes['gen_ai.request.model'] === 'claude-test' && typeof span.attributes['zidane.cost_usd'] === 'number')).toBe(true)
    const tools = operation(spans, 'execute_tool')
    expect(tools.map(span => span.attributes['gen_ai.tool.name'])).toEqual(['shell'])
    expect(tools[0]?.attributes['gen_ai.tool.call.id']).toMatch(/^toolu_/)
    expect(inputTokens(spans)).toBe(ledgerOf('traced'))
    expect(inputTokens(spans)).toBe(46 + 70)
  })

  it('counts a run killed mid-turn and resumed once: no second chat span for the replayed step', async () => {
    await s().request('/v1/sessions/crash-traced/prompts', { method: 'POST', body: JSON.stringify({ prompt: 'crash-traced' }) })
    await waitFor(() => (existsSync(sideEffects) ? true : undefined))
    // The first step's span has left the process (the exporter's batch waits 50 ms): the kill loses no span.
    await waitFor(() => (operation(spansOf('crash-traced'), 'chat').length === 1 ? true : undefined), 10_000)
    s().services().current()?.kill('SIGKILL')
    const spans = await finishedRun('crash-traced')
    await expectOneTracePerRun('crash-traced', spans)
    expect(model?.requests.filter(request => promptOf(request) === 'crash-traced').map(turnOf)).toEqual([0, 1])
    expect(operation(spans, 'chat').map(span => span.attributes['zidane.turn']).sort()).toEqual([1, 2])
    // The call cut off by the kill: its step ran again after the restart and recorded the interrupted text.
    expect(operation(spans, 'execute_tool').map(span => span.attributes['zidane.tool.interrupted'])).toEqual([true])
    expect(inputTokens(spans)).toBe(ledgerOf('crash-traced'))
    expect(inputTokens(spans)).toBe(52 + 70)
  })
})

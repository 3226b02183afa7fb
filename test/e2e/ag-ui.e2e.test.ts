import { HttpAgent } from '@ag-ui/client'
import type { Interrupt, ResumeEntry, RunAgentInput } from '@ag-ui/core'
import { EventSchemas } from '@ag-ui/core/schemas'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lastUserText, start, streamedWords } from '../../support/anthropic-server'
import type { FakeAnthropicServer, RecordedRequest, ScriptedMessage, ScriptedResponse } from '../../support/anthropic-server'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

/*
 * The AG-UI endpoint on the real stack (Restate server, services, gateway; a local Anthropic-wire model), driven by
 * `@ag-ui/client`'s HttpAgent: a randomized suite of runs (text, tools, questions, plans, approvals, sub-agents,
 * steering) with one SIGKILL of the services in the middle, every event on the wire checked against `@ag-ui/core`'s
 * schemas; an interrupt resumed after a SIGKILL; a repeated resume; another key.
 */

/** Runs of the randomized suite. */
const RUNS = 100
/** Runs in flight at once. */
const CONCURRENCY = 8
const API_KEY = 'sk-ant-agui'

type Kind = 'text' | 'tool' | 'question' | 'plan' | 'approval' | 'spawn' | 'steer'
const KINDS: readonly Kind[] = ['text', 'tool', 'question', 'plan', 'approval', 'spawn', 'steer']

interface WireMessage { role: string; content: string | Array<{ type: string; content?: unknown }> }

function turnOf(request: RecordedRequest): number {
  return ((request.body?.messages as unknown as WireMessage[] | undefined) ?? []).filter(message => message.role === 'assistant').length
}

function firstUserText(request: RecordedRequest): string {
  const first = ((request.body?.messages as unknown as WireMessage[] | undefined) ?? [])[0]
  return typeof first?.content === 'string' ? first.content : (first?.content ?? []).map(block => String((block as { text?: string }).text ?? '')).join('')
}

function lastToolResult(request: RecordedRequest): string {
  const last = ((request.body?.messages as unknown as WireMessage[] | undefined) ?? []).at(-1)
  const result = typeof last?.content === 'string' ? undefined : last?.content.find(block => block.type === 'tool_result')?.content
  return typeof result === 'string' ? result : JSON.stringify(result) ?? ''
}

const text = (value: string): ScriptedResponse => ({ kind: 'message', content: [{ type: 'text', text: value }], usage: { input_tokens: 30, output_tokens: 5 } })
const toolCall = (name: string, input: Record<string, string | string[]>, intro = '', deltaIntervalMs = 0): ScriptedMessage => ({
  kind: 'message', content: [...(intro === '' ? [] : [{ type: 'text' as const, text: intro }]), { type: 'tool_use', name, input }], usage: { input_tokens: 30, output_tokens: 8 }, deltaIntervalMs,
})

/** The fake model: the prompt `<kind> <n>` says what the run does; the steering text gets its own answer. */
function answer(request: RecordedRequest): ScriptedResponse {
  const prompt = firstUserText(request)
  const turn = turnOf(request)
  if (prompt.startsWith('child task')) return streamedWords(4, 2, 'child')
  if (turn > 0 && lastUserText(request).startsWith('steering')) return text('steered: understood')
  const kind = prompt.split(' ')[0] as Kind
  if (turn > 0) return text(`done ${kind}: ${lastToolResult(request).slice(0, 40)}`)
  switch (kind) {
    case 'tool': return toolCall('list_files', {}, 'Let me look.')
    case 'question': return toolCall('ask_user', { question: 'Which color?', options: ['red', 'blue'] })
    case 'plan': return toolCall('present_plan', { plan: 'Step one, then step two.' })
    case 'approval': return toolCall('write_file', { path: `${prompt.replaceAll(' ', '-')}.txt`, content: 'hello' })
    case 'spawn': return toolCall('spawn', { task: `child task of ${prompt}` })
    case 'steer': return toolCall('list_files', {}, Array.from({ length: 60 }, (_, index) => `slow${index}`).join(' '), 25)
    default: return streamedWords(12, 3)
  }
}

/** What one AG-UI request put on the wire (parsed from the raw SSE) and how the client ended. */
interface Received { events: Array<Record<string, unknown>>; error?: unknown; reads: Array<Promise<void>> }

describe('AG-UI endpoint on the real stack', { timeout: 300_000 }, () => {
  let stack: TestStack | undefined
  let model: FakeAnthropicServer | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  const all: Array<Record<string, unknown>> = []
  let spawnsWithSubagentEvents = 0
  let steeredRuns = 0
  printStackOutputOnFailure(() => stack)

  beforeAll(async () => {
    model = await start({ apiKey: API_KEY })
    model.setHandler(answer)
    stack = await startTestStack({ ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_BASE_URL: model.url, ZIDANE_MODEL: 'claude-agui', ZIDANE_APPROVE_TOOLS: 'write_file', GATEWAY_MAX_EVENT_STREAMS: '100' })
  }, 120_000)
  afterAll(async () => {
    await stack?.destroy()
    await model?.close()
  })

  /** An HttpAgent of `threadId` whose fetch keeps a copy of every SSE frame it reads (before the client's own checks). */
  const agentFor = (threadId: string, received: Received, key = s().apiKeys[0]): HttpAgent => new HttpAgent({
    url: `${s().gatewayUrl}/v1/ag-ui`, headers: { Authorization: `Bearer ${key}` }, threadId,
    fetch: async (url, init) => {
      const response = await fetch(url, init)
      if (response.body === null) return response
      const [mine, theirs] = response.body.tee()
      received.reads.push(collectFrames(mine, received.events))
      return new Response(theirs, { status: response.status, statusText: response.statusText, headers: response.headers })
    },
  })

  /** One AG-UI run: the events of its stream, and the client's error if it failed. */
  const runOnce = async (agent: HttpAgent, parameters: Parameters<HttpAgent['runAgent']>[0] = {}): Promise<Received & { interrupts: Interrupt[] }> => {
    const received: Received = { events: [], reads: [] }
    const tapped = agentFor(agent.threadId, received, (agent.headers.Authorization ?? '').replace('Bearer ', ''))
    tapped.messages = agent.messages
    tapped.pendingInterrupts = agent.pendingInterrupts
    try {
      await tapped.runAgent(parameters)
    } catch (error) {
      received.error = error
    }
    await Promise.all(received.reads)
    all.push(...received.events)
    agent.messages = tapped.messages
    agent.pendingInterrupts = tapped.pendingInterrupts
    const finished = received.events.find(event => event.type === 'RUN_FINISHED') as { outcome?: { type: string; interrupts?: Interrupt[] } } | undefined
    return { ...received, interrupts: finished?.outcome?.type === 'interrupt' ? finished.outcome.interrupts ?? [] : [] }
  }

  const newAgent = (threadId: string, key?: string): HttpAgent => new HttpAgent({ url: `${s().gatewayUrl}/v1/ag-ui`, headers: { Authorization: `Bearer ${key ?? s().apiKeys[0]}` }, threadId })
  const say = (agent: HttpAgent, content: string): void => { agent.messages = [...agent.messages, { id: `m-${Math.random().toString(36).slice(2)}`, role: 'user', content }] }
  const post = (input: Partial<RunAgentInput>, key?: string): Promise<Response> => s().request('/v1/ag-ui', { method: 'POST', body: JSON.stringify({ runId: 'r', messages: [], ...input }), ...(key === undefined ? {} : { key }) })

  /** Answers every interrupt of a run as the user would. */
  const answers = (interrupts: Interrupt[], random: () => number): ResumeEntry[] => interrupts.map(interrupt => {
    if (interrupt.reason === 'tool_call') return { interruptId: interrupt.id, status: 'resolved', payload: { approved: random() < 0.7 } }
    if (interrupt.reason === 'confirmation') return { interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }
    return { interruptId: interrupt.id, status: 'resolved', payload: 'blue' }
  })

  /** One run of the suite, to its end: interrupts answered (sometimes twice), steering sent mid-run. */
  const suiteRun = async (index: number, kind: Kind, random: () => number): Promise<string[]> => {
    const problems: string[] = []
    const threadId = `agui-${index}`
    const agent = newAgent(threadId)
    say(agent, `${kind} ${index}`)
    const forwardedProps = { subagents: kind === 'spawn' }
    const steering = kind === 'steer' ? steerWhenStreaming(threadId, index) : undefined
    let result = await runOnce(agent, { forwardedProps })
    const seen = [...result.events]
    for (let round = 0; result.interrupts.length > 0 && round < 5; round++) {
      const resume = answers(result.interrupts, random)
      result = await runOnce(agent, { resume, forwardedProps })
      seen.push(...result.events)
      if (random() < 0.3) {
        const repeated = await runOnce(newAgent(threadId), { resume, forwardedProps })
        if (repeated.error !== undefined) problems.push(`${threadId}: repeated resume failed: ${String(repeated.error)}`)
      }
    }
    if (steering !== undefined) problems.push(...(await steering))
    if (result.error !== undefined) problems.push(`${threadId}: ${String(result.error)}`)
    const last = result.events.at(-1)
    if (last?.type !== 'RUN_FINISHED' || (last.outcome as { type?: string } | undefined)?.type !== 'success') problems.push(`${threadId}: ended with ${JSON.stringify(last)}`)
    // Across the AG-UI runs of one client (a run, its continuations after answers), each call and each result once.
    for (const type of ['TOOL_CALL_START', 'TOOL_CALL_RESULT']) {
      const ids = seen.filter(event => event.type === type).map(event => String(event.toolCallId))
      if (new Set(ids).size !== ids.length) problems.push(`${threadId}: ${type} sent twice: ${ids.join(', ')}`)
    }
    if (kind === 'steer' && seen.some(event => event.type === 'TEXT_MESSAGE_CONTENT' && String(event.delta).includes('steered'))) steeredRuns++
    if (kind === 'spawn') {
      // A sub-agent's last events are in the log before its parent goes on: every spawn run shows them, in pairs.
      const started = seen.filter(event => event.type === 'SUBAGENT_STARTED').length
      if (started > 0) spawnsWithSubagentEvents++
      if (started !== seen.filter(event => event.type === 'SUBAGENT_FINISHED' || event.type === 'SUBAGENT_ERROR').length) problems.push(`${threadId}: unpaired sub-agent events`)
    }
    return problems
  }

  /** Sends a steering message once the run of `threadId` streams text: a second client, `forwardedProps.mode: "steer"`. */
  const steerWhenStreaming = async (threadId: string, index: number): Promise<string[]> => {
    // The run's first step streams for about 1.5 s once it started: steer while it does.
    for (let tries = 0; tries < 200; tries++) {
      const view = await s().request(`/v1/sessions/${threadId}`)
      const runs = view.status === 200 ? ((await view.json()) as { runs: Array<{ status: string }> }).runs : []
      if (runs.at(-1)?.status === 'running') break
      await new Promise(resolve => setTimeout(resolve, 50))
    }
    await new Promise(resolve => setTimeout(resolve, 200))
    const refused = await post({ threadId, runId: `refused-${index}`, messages: [{ id: 'x', role: 'user', content: 'steering too' }] })
    const body = await refused.text()
    const agent = newAgent(threadId)
    say(agent, `steering ${index}`)
    const steered = await runOnce(agent, { forwardedProps: { mode: 'steer' } })
    const problems: string[] = []
    // The run may have ended before the steering arrived: the message then started a run of its own (202-like success).
    if (refused.status !== 409 && refused.status !== 200) problems.push(`${threadId}: a prompt while running answered ${refused.status} ${body.slice(0, 200)}`)
    if (steered.error !== undefined) problems.push(`${threadId}: steering failed: ${String(steered.error)}`)
    return problems
  }

  it(`a randomized suite of ${RUNS} runs over HttpAgent: every event validates, every run ends well (one SIGKILL midway)`, async () => {
    const startedAt = performance.now()
    let seed = 20_261_203
    const random = (): number => { seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648; return seed / 2_147_483_648 }
    const kinds = Array.from({ length: RUNS }, (_, index) => KINDS[index % KINDS.length] ?? 'text').sort(() => random() - 0.5)
    const problems: string[] = []
    let next = 0
    let killed = false
    const worker = async (): Promise<void> => {
      for (let index = next++; index < RUNS; index = next++) {
        if (!killed && index >= RUNS / 2) {
          killed = true
          s().services().current()?.kill('SIGKILL')
        }
        problems.push(...(await suiteRun(index, kinds[index] ?? 'text', random)))
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker))
    const invalid = all.filter(event => !EventSchemas.safeParse(event).success)
    console.log(`ag-ui suite: ${RUNS} runs, ${all.length} events validated, ${invalid.length} invalid, ${Math.round(performance.now() - startedAt)} ms; ${spawnsWithSubagentEvents} of ${kinds.filter(kind => kind === 'spawn').length} spawn runs forwarded sub-agent events, ${steeredRuns} of ${kinds.filter(kind => kind === 'steer').length} steered runs answered the steering`)
    expect(invalid).toEqual([])
    expect(spawnsWithSubagentEvents).toBe(kinds.filter(kind => kind === 'spawn').length)
    expect(steeredRuns).toBeGreaterThan(0)
    expect(problems).toEqual([])
    expect(killed).toBe(true)
  })

  it('an interrupt raised before a SIGKILL of the services is resumed after it by its id; the tool result is sent once', async () => {
    const agent = newAgent('agui-crash')
    say(agent, 'approval crash')
    const first = await runOnce(agent)
    const interrupt = first.interrupts[0]
    expect(interrupt).toMatchObject({ reason: 'tool_call' })
    const call = first.events.find(event => event.type === 'TOOL_CALL_START')
    expect(interrupt?.toolCallId).toBe(call?.toolCallId)
    s().services().current()?.kill('SIGKILL')
    await new Promise(resolve => setTimeout(resolve, 300))
    // A client that lost its state: a new agent, with only the interrupt id.
    const resumed = await runOnce(newAgent('agui-crash'), { resume: [{ interruptId: String(interrupt?.id), status: 'resolved', payload: { approved: true } }] })
    expect(resumed.error).toBeUndefined()
    expect(resumed.events.filter(event => event.type === 'TOOL_CALL_RESULT' && event.toolCallId === call?.toolCallId)).toHaveLength(1)
    expect(resumed.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } })
    // Resumed again: a no-op; the run's end streams again, without a second result in the client's messages.
    const again = await runOnce(newAgent('agui-crash'), { resume: [{ interruptId: String(interrupt?.id), status: 'resolved', payload: { approved: false } }] })
    expect(again.error).toBeUndefined()
    expect(again.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } })
    expect(again.events.filter(event => event.type === 'TOOL_CALL_RESULT')).toHaveLength(0)
    const snapshot = again.events.find(event => event.type === 'MESSAGES_SNAPSHOT') as { messages: Array<{ role: string; toolCallId?: string }> } | undefined
    expect(snapshot?.messages.filter(message => message.role === 'tool' && message.toolCallId === call?.toolCallId)).toHaveLength(1)
    expect(all.filter(event => !EventSchemas.safeParse(event).success)).toEqual([])
  })

  it("another key gets 404 for the session's interrupts and its stream; bad input gets 400; capabilities answer", async () => {
    const agent = newAgent('agui-tenant')
    say(agent, 'question tenant')
    const first = await runOnce(agent)
    const interruptId = String(first.interrupts[0]?.id)
    const other = s().apiKeys[1]
    const foreignResume = await post({ threadId: 'agui-tenant', resume: [{ interruptId, status: 'resolved', payload: 'red' }] }, other)
    expect(foreignResume.status).toBe(404)
    expect(await foreignResume.json()).toMatchObject({ error: { code: 'question_not_found' } })
    const foreignConnect = await post({ threadId: 'agui-tenant' }, other)
    expect(foreignConnect.status).toBe(404)
    expect(await foreignConnect.json()).toMatchObject({ error: { code: 'session_not_found' } })
    const busy = await post({ threadId: 'agui-tenant', messages: [{ id: 'y', role: 'user', content: 'again' }] })
    expect(busy.status).toBe(409)
    expect(await busy.json()).toMatchObject({ error: { code: 'run_active' } })
    const bad = await post({ threadId: 'no/slash' })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ error: { code: 'invalid_request' } })
    const capabilities = await s().request('/v1/ag-ui/capabilities')
    expect(capabilities.status).toBe(200)
    expect(await capabilities.json()).toMatchObject({ humanInTheLoop: { interrupts: true } })
    // A reconnect (no new message) gets the snapshot and the pending interrupt again; then it is answered.
    const reconnect = await runOnce(newAgent('agui-tenant'))
    expect(reconnect.interrupts.map(interrupt => interrupt.id)).toEqual([interruptId])
    const done = await runOnce(newAgent('agui-tenant'), { resume: [{ interruptId, status: 'resolved', payload: 'red' }] })
    expect(done.events.find(event => event.type === 'TOOL_CALL_RESULT')).toMatchObject({ content: 'red' })
  })
})

/** Parses the SSE frames of `body` (`data: <json>` lines) into `into`. */
async function collectFrames(body: ReadableStream<Uint8Array>, into: Array<Record<string, unknown>>): Promise<void> {
  const decoder = new TextDecoder()
  let buffer = ''
  try {
    for await (const chunk of body) {
      buffer += decoder.decode(chunk, { stream: true })
      let end = buffer.indexOf('\n\n')
      while (end >= 0) {
        const frame = buffer.slice(0, end)
        buffer = buffer.slice(end + 2)
        const data = frame.split('\n').filter(line => line.startsWith('data: ')).map(line => line.slice(6)).join('\n')
        if (data !== '') into.push(JSON.parse(data) as Record<string, unknown>)
        end = buffer.indexOf('\n\n')
      }
    }
  } catch {
    // The client aborted its read: what arrived is kept.
  }
}

import { safeValidateTypes } from '@ai-sdk/provider-utils'
import { readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai'
import { describe, expect, it } from 'vitest'
import type { PendingQuestion } from '../../../contract/session'
import type { TimelineItem } from '../../../ingress-gateway/protocols/timeline-items'
import { UiMessageStreamMapper, type UiMessageStreamOptions } from '../../../ingress-gateway/protocols/ui-message-stream'

const RUN = 'run_1'

/** Every chunk the mapper gives for `items`, each checked against the AI SDK's own chunk schema. */
async function chunksOf(items: TimelineItem[], options: Partial<UiMessageStreamOptions> = {}): Promise<UIMessageChunk[]> {
  const mapper = new UiMessageStreamMapper({ runId: RUN, messageId: RUN, ...options })
  const chunks = [...mapper.start(), ...items.flatMap(item => mapper.map(item))]
  for (const chunk of chunks) {
    const result = await safeValidateTypes({ value: chunk, schema: uiMessageChunkSchema })
    expect(result.success, `${JSON.stringify(chunk)} ${result.success ? '' : String(result.error)}`).toBe(true)
  }
  return chunks
}

/** The assistant message `readUIMessageStream` builds from `chunks` (on top of `message`, for a continuation). */
async function messageOf(chunks: UIMessageChunk[], message?: UIMessage, errors: unknown[] = []): Promise<UIMessage> {
  const stream = new ReadableStream<UIMessageChunk>({ start(controller) { for (const chunk of chunks) controller.enqueue(chunk); controller.close() } })
  let last: UIMessage | undefined
  for await (const built of readUIMessageStream({ stream, ...(message === undefined ? {} : { message }), onError: error => errors.push(error) })) last = structuredClone(built)
  if (last === undefined) throw new Error('no message')
  return last
}

const types = (chunks: UIMessageChunk[]): string[] => chunks.map(chunk => chunk.type)
const textOf = (message: UIMessage): string => message.parts.flatMap(part => (part.type === 'text' ? [part.text] : [])).join('')

const runStart: TimelineItem = { type: 'run-start', runId: RUN, prompt: 'hi', seq: 1 }
const step = (n: number): TimelineItem => ({ type: 'step-start', runId: RUN, step: n })
const text = (n: number, delta: string): TimelineItem => ({ type: 'text-delta', runId: RUN, step: n, delta })
const stepEnd = (n: number, journaled: string): TimelineItem => ({ type: 'step-end', runId: RUN, step: n, text: journaled, textTruncated: false })
const toolCall = (n: number, callId: string, name = 'shell'): TimelineItem => ({ type: 'tool-call', runId: RUN, step: n, callId, name, input: { command: 'ls' } })
const toolResult = (n: number, callId: string, output: string, isError = false): TimelineItem => ({ type: 'tool-result', runId: RUN, step: n, callId, name: 'shell', output, isError })
const runEnd = (status: string, extra: Partial<Extract<TimelineItem, { type: 'run-end' }>> = {}): TimelineItem => ({ type: 'run-end', runId: RUN, status, text: '', seq: 9, ...extra })
const question = (fields: Partial<PendingQuestion> & Pick<PendingQuestion, 'id' | 'kind'>): TimelineItem => ({ type: 'question', runId: RUN, question: { question: 'ok?', createdAt: 1, answerUrl: `https://gw/v1/awakeables/${fields.id}/resolve?token=t`, ...fields } })

describe('the AI SDK UI message stream of a run', () => {
  it('opens with start (the message id), streams text per step, and finishes with the usage and cost as metadata', async () => {
    const chunks = await chunksOf([runStart, step(1), text(1, 'Hello'), text(1, ' world'), stepEnd(1, 'Hello world'),
      runEnd('completed', { text: 'Hello world', totals: { usage: { inputTokens: 10, outputTokens: 3 }, costUsd: 0.01 } })])
    expect(types(chunks)).toEqual(['start', 'start-step', 'text-start', 'text-delta', 'text-delta', 'text-end', 'finish-step', 'message-metadata', 'finish'])
    expect(chunks[0]).toEqual({ type: 'start', messageId: RUN })
    expect(chunks[2]).toEqual({ type: 'text-start', id: `${RUN}:1:text` })
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' })
    const message = await messageOf(chunks)
    expect(message.id).toBe(RUN)
    expect(textOf(message)).toBe('Hello world')
    expect(message.metadata).toEqual({ runId: RUN, status: 'completed', usage: { inputTokens: 10, outputTokens: 3 }, costUsd: 0.01 })
  })

  it('after a step-reset, the client holds exactly the journaled text of the step', async () => {
    const chunks = await chunksOf([runStart, step(1), text(1, 'Hel'), text(1, 'lo wro'), { type: 'step-reset', runId: RUN, step: 1, reason: 'superseded' },
      text(1, 'Hello'), text(1, ' there'), stepEnd(1, 'Hello there'), runEnd('completed')])
    expect(types(chunks)).toContain('reset-step')
    const message = await messageOf(chunks)
    expect(message.parts.filter(part => part.type === 'text')).toHaveLength(1)
    expect(textOf(message)).toBe('Hello there')
  })

  it('sends the missing tail of the journaled text at step-end when the deltas fell short', async () => {
    const message = await messageOf(await chunksOf([runStart, step(1), text(1, 'Hel'), stepEnd(1, 'Hello'), runEnd('completed')]))
    expect(textOf(message)).toBe('Hello')
  })

  it('maps tool calls and results to dynamic tool parts, errors included, and keeps later text in its own part', async () => {
    const chunks = await chunksOf([runStart, step(1), text(1, 'Let me look.'), toolCall(1, 'c1'), toolResult(1, 'c1', 'a.txt'), stepEnd(1, 'Let me look.'),
      step(2), toolCall(2, 'c2'), toolResult(2, 'c2', 'boom', true), stepEnd(2, ''), step(3), text(3, 'Done.'), stepEnd(3, 'Done.'), runEnd('completed')])
    expect(chunks).toContainEqual({ type: 'tool-input-available', toolCallId: 'c1', toolName: 'shell', input: { command: 'ls' }, dynamic: true })
    const message = await messageOf(chunks)
    const tools = message.parts.filter(part => part.type === 'dynamic-tool')
    expect(tools.map(part => [part.toolCallId, part.state])).toEqual([['c1', 'output-available'], ['c2', 'output-error']])
    expect(message.parts.map(part => part.type)).toEqual(['step-start', 'text', 'dynamic-tool', 'step-start', 'dynamic-tool', 'step-start', 'text'])
  })

  it('ends the stream at an approval with tool-approval-request (id = the question id) and finish tool-calls', async () => {
    const mapper = new UiMessageStreamMapper({ runId: RUN, messageId: RUN })
    const items = [runStart, step(1), toolCall(1, 'c1'), question({ id: 'awk_1', kind: 'approval', callId: 'c1', tool: 'shell', input: '{"command":"ls"}' })]
    const chunks = [...mapper.start(), ...items.flatMap(item => mapper.map(item))]
    expect(chunks.slice(-3)).toEqual([{ type: 'tool-approval-request', approvalId: 'awk_1', toolCallId: 'c1' }, { type: 'finish-step' }, { type: 'finish', finishReason: 'tool-calls' }])
    expect(mapper.ended).toBe(true)
    expect(mapper.map(toolResult(1, 'c1', 'a.txt'))).toEqual([])
    const message = await messageOf(chunks)
    const part = message.parts.find(candidate => candidate.type === 'dynamic-tool')
    expect(part).toMatchObject({ toolCallId: 'c1', state: 'approval-requested', approval: { id: 'awk_1' } })
  })

  it('continues the same message after the approval: the tool part gets its output, then the next step streams', async () => {
    const asked = await messageOf(await chunksOf([runStart, step(1), toolCall(1, 'c1'), question({ id: 'awk_1', kind: 'approval', callId: 'c1' })]))
    const responded = structuredClone(asked)
    const tool = responded.parts.find(part => part.type === 'dynamic-tool')
    Object.assign(tool ?? {}, { state: 'approval-responded', approval: { id: 'awk_1', approved: true } })
    const continuation = await chunksOf([question({ id: 'awk_1', kind: 'approval', callId: 'c1' }), toolResult(1, 'c1', 'a.txt'), stepEnd(1, ''), step(2), text(2, 'Listed.'), stepEnd(2, 'Listed.'), runEnd('completed')],
      { continues: true, answeredApprovals: new Set(['awk_1']) })
    expect(types(continuation)).not.toContain('tool-approval-request')
    const message = await messageOf(continuation, responded)
    expect(message.id).toBe(RUN)
    expect(message.parts.filter(part => part.type === 'dynamic-tool').map(part => [part.toolCallId, part.state])).toEqual([['c1', 'output-available']])
    expect(textOf(message)).toBe('Listed.')
  })

  it('gives an approval whose call it did not see a tool part from the question (tool name and input)', async () => {
    const message = await messageOf(await chunksOf([runStart, step(1), question({ id: 'awk_2', kind: 'approval', callId: 'c9', tool: 'write_file', input: '{"path":"a"' })]))
    expect(message.parts.find(part => part.type === 'dynamic-tool')).toMatchObject({ toolCallId: 'c9', toolName: 'write_file', input: { preview: '{"path":"a"' }, state: 'approval-requested' })
  })

  it('shows ask_user and present_plan as data-question parts with the answer link, without ending the stream', async () => {
    const mapper = new UiMessageStreamMapper({ runId: RUN, messageId: RUN })
    const chunks = [...mapper.start(), ...mapper.map(question({ id: 'awk_q', kind: 'ask_user', question: 'Which file?', options: ['a', 'b'], callId: 'c3' }))]
    expect(chunks.at(-1)).toEqual({ type: 'data-question', id: 'awk_q', data: { id: 'awk_q', kind: 'ask_user', question: 'Which file?', options: ['a', 'b'], callId: 'c3', answerUrl: 'https://gw/v1/awakeables/awk_q/resolve?token=t' } })
    expect(mapper.ended).toBe(false)
  })

  it('keeps data parts across a step-reset: they are sent again after it', async () => {
    const chunks = await chunksOf([runStart, step(1), text(1, 'x'), question({ id: 'awk_q', kind: 'ask_user' }), { type: 'step-reset', runId: RUN, step: 1, reason: 'journaled-text' }, text(1, 'y'), stepEnd(1, 'y'), runEnd('completed')])
    const message = await messageOf(chunks)
    expect(message.parts.filter(part => part.type === 'data-question')).toHaveLength(1)
    expect(textOf(message)).toBe('y')
  })

  it('shows each sub-agent as one data-subagent part (id = its run id) updated until its end', async () => {
    const child = { runId: RUN, childRunId: 'child_1', label: 'researcher', depth: 1 }
    const chunks = await chunksOf([runStart, step(1), toolCall(1, 'c1', 'spawn'), { type: 'child-start', ...child, task: 'find it' },
      { type: 'child-activity', ...child, event: 'tool:start', data: { name: 'grep', input: { pattern: 'x' } } },
      { type: 'child-end', ...child, status: 'completed', totals: { costUsd: 0.5 } }, toolResult(1, 'c1', 'found'), stepEnd(1, ''), runEnd('completed')])
    const parts = (await messageOf(chunks)).parts.filter(part => part.type === 'data-subagent')
    expect(parts).toEqual([{ type: 'data-subagent', id: 'child_1', data: { label: 'researcher', depth: 1, task: 'find it', status: 'completed', totals: { costUsd: 0.5 }, lastActivity: { event: 'tool:start', tool: 'grep' } } }])
  })

  it('shows a steering message as a steering-message part (id = its turn id)', async () => {
    const chunks = await chunksOf([runStart, step(1), text(1, 'a'), stepEnd(1, 'a'), { type: 'steer', runId: RUN, turnId: 't5', text: 'also b' }, runEnd('completed')])
    expect(chunks).toContainEqual({ type: 'steering-message', id: 't5', parts: [{ type: 'text', text: 'also b' }] })
    expect((await messageOf(chunks)).parts).toContainEqual({ type: 'steering-message', id: 't5', parts: [{ type: 'text', text: 'also b' }] })
  })

  it('ends a cancelled run with abort and no finish', async () => {
    const chunks = await chunksOf([runStart, step(1), text(1, 'Hel'), runEnd('cancelled')])
    expect(types(chunks).slice(-4)).toEqual(['text-end', 'finish-step', 'message-metadata', 'abort'])
    expect(types(chunks)).not.toContain('finish')
  })

  it('ends a failed run with error (its text) then finish error', async () => {
    const chunks = await chunksOf([runStart, runEnd('failed', { error: 'provider exploded' })])
    expect(chunks.slice(-2)).toEqual([{ type: 'error', errorText: 'provider exploded' }, { type: 'finish', finishReason: 'error' }])
    const errors: unknown[] = []
    await messageOf(chunks, undefined, errors)
    expect(errors.map(String)).toEqual(['Error: provider exploded'])
  })

  it("skips other runs' items, and reports a source error as a transient data part", async () => {
    const other = 'run_0'
    const chunks = await chunksOf([{ type: 'run-start', runId: other, prompt: 'x', seq: 1 }, { type: 'step-start', runId: other, step: 1 }, { type: 'text-delta', runId: other, step: 1, delta: 'no' },
      { type: 'source-error', code: 'restate_unavailable', message: 'down' }, runStart, step(1), text(1, 'yes'), stepEnd(1, 'yes'), runEnd('completed')])
    expect(chunks).toContainEqual({ type: 'data-gateway-error', data: { code: 'restate_unavailable', message: 'down' }, transient: true })
    expect(textOf(await messageOf(chunks))).toBe('yes')
  })

  it('joining a run midway: a result whose call it never sent gets the call first; a step-end sends no text the client already has', async () => {
    const chunks = await chunksOf([toolResult(2, 'c7', 'out'), stepEnd(2, 'text of the earlier part of the step'), step(3), text(3, 'after'), stepEnd(3, 'after'), runEnd('completed')])
    const message = await messageOf(chunks)
    expect(message.parts.find(part => part.type === 'dynamic-tool')).toMatchObject({ toolCallId: 'c7', state: 'output-available', output: 'out' })
    expect(textOf(message)).toBe('after')
  })

  it('streams reasoning as reasoning parts, closed before the text', async () => {
    const chunks = await chunksOf([runStart, step(1), { type: 'reasoning-delta', runId: RUN, step: 1, delta: 'thinking' }, text(1, 'answer'), stepEnd(1, 'answer'), runEnd('completed')])
    expect(types(chunks).slice(2, 7)).toEqual(['reasoning-start', 'reasoning-delta', 'reasoning-end', 'text-start', 'text-delta'])
    const message = await messageOf(chunks)
    expect(message.parts.find(part => part.type === 'reasoning')).toMatchObject({ text: 'thinking', state: 'done' })
  })

  it('an approval continuation replays the run silently, then sends from the approved call\'s result on (a second approval waits for it)', async () => {
    const before = [runStart, step(1), text(1, 'Let me look.'), toolCall(1, 'c1'), toolCall(1, 'c2')]
    const asked = await messageOf(await chunksOf([...before, question({ id: 'awk_1', kind: 'approval', callId: 'c1' })]))
    const responded = structuredClone(asked)
    Object.assign(responded.parts.find(part => part.type === 'dynamic-tool' && part.toolCallId === 'c1') ?? {}, { state: 'approval-responded', approval: { id: 'awk_1', approved: true } })
    const continuation = await chunksOf([...before, question({ id: 'awk_1', kind: 'approval', callId: 'c1' }), question({ id: 'awk_2', kind: 'approval', callId: 'c2' }), toolResult(1, 'c1', 'a.txt')],
      { continues: true, answeredApprovals: new Set(['awk_1']), resumeAt: { toolResults: new Set(['c1']) } })
    expect(types(continuation)).toEqual(['start', 'tool-output-available', 'tool-approval-request', 'finish-step', 'finish'])
    const message = await messageOf(continuation, responded)
    expect(message.parts.filter(part => part.type === 'dynamic-tool').map(part => [part.toolCallId, part.state])).toEqual([['c1', 'output-available'], ['c2', 'approval-requested']])
    expect(textOf(message)).toBe('Let me look.')
  })

  it('a steering stream is a new message that starts after the steer item carrying its text', async () => {
    const chunks = await chunksOf([runStart, step(1), text(1, 'first'), stepEnd(1, 'first'), { type: 'steer', runId: RUN, turnId: 't2', text: 'also b' }, step(3), text(3, 'ok, b too'), stepEnd(3, 'ok, b too'), runEnd('completed')],
      { messageId: 'm2', resumeAt: { steerText: 'also b' } })
    expect(types(chunks).slice(0, 3)).toEqual(['start', 'start-step', 'text-start'])
    expect(textOf(await messageOf(chunks))).toBe('ok, b too')
  })

  it('a steering stream drops the questions of the run before the steer (they belong to the earlier message)', async () => {
    const chunks = await chunksOf([runStart, step(1), toolCall(1, 'c1'), question({ id: 'awk_1', kind: 'approval', callId: 'c1' }), toolResult(1, 'c1', 'ok'), stepEnd(1, ''),
      { type: 'steer', runId: RUN, turnId: 't2', text: 'also b' }, step(2), text(2, 'b'), stepEnd(2, 'b'), runEnd('completed')], { messageId: 'm2', resumeAt: { steerText: 'also b' } })
    expect(types(chunks)).not.toContain('tool-approval-request')
    expect(textOf(await messageOf(chunks))).toBe('b')
  })
})

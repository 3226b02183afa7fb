import { safeValidateTypes } from '@ai-sdk/provider-utils'
import { DefaultChatTransport, readUIMessageStream, uiMessageChunkSchema, type UIMessage, type UIMessageChunk } from 'ai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lastUserText, start, streamedWords } from '../../support/anthropic-server'
import type { FakeAnthropicServer, RecordedRequest } from '../../support/anthropic-server'
import { waitFor } from '../helpers/restate/restate-harness'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

/*
 * The AI SDK UI message stream (`useChat`'s protocol) on the real stack, through the `ai` package's own
 * `DefaultChatTransport` and `readUIMessageStream`: text streams live and ends as the journaled text; a reload resumes
 * the run from its start; a cancel ends the stream with `abort`; an approval ends the stream and the next request
 * (carrying the client's `tool-approval-response`) continues the same run.
 */

const API_KEY = 'sk-ant-chat'
const APPROVE_PROMPT = 'please write the note'
const ASK_PROMPT = 'ask me a color'
const NOTE = { path: 'note.txt', content: 'hello from the chat' }

interface View {
  runs: Array<{ id: string; status: string; text?: string }>
  turns: Array<{ role: string; content: Array<{ type: string; text?: string; isError?: boolean }> }>
}

function turnOf(request: RecordedRequest): number {
  return ((request.body?.messages as unknown as Array<{ role: string }> | undefined) ?? []).filter(message => message.role === 'assistant').length
}

const userMessage = (text: string): UIMessage => ({ id: `u-${text}`, role: 'user', parts: [{ type: 'text', text }] })
const textOf = (message: UIMessage | undefined): string => (message?.parts ?? []).flatMap(part => (part.type === 'text' ? [part.text] : [])).join('')

/** Every chunk of `stream` with its arrival time, each checked against the AI SDK's chunk schema. */
async function collect(stream: ReadableStream<UIMessageChunk>, onChunk: (chunk: UIMessageChunk) => void = () => undefined): Promise<Array<{ chunk: UIMessageChunk; atMs: number }>> {
  const chunks: Array<{ chunk: UIMessageChunk; atMs: number }> = []
  for await (const chunk of stream) {
    const valid = await safeValidateTypes({ value: chunk, schema: uiMessageChunkSchema })
    expect(valid.success, JSON.stringify(chunk)).toBe(true)
    chunks.push({ chunk, atMs: performance.now() })
    onChunk(chunk)
  }
  return chunks
}

/** The assistant message the chunks build (on top of `message` for a continuation). */
async function messageOf(chunks: UIMessageChunk[], message?: UIMessage): Promise<UIMessage | undefined> {
  const stream = new ReadableStream<UIMessageChunk>({ start(controller) { for (const chunk of chunks) controller.enqueue(chunk); controller.close() } })
  let last: UIMessage | undefined
  for await (const built of readUIMessageStream({ stream, ...(message === undefined ? {} : { message }) })) last = structuredClone(built)
  return last
}

describe('the AI SDK UI message stream (useChat) on the real stack', { timeout: 120_000 }, () => {
  let stack: TestStack | undefined
  let model: FakeAnthropicServer | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)

  beforeAll(async () => {
    model = await start({ apiKey: API_KEY })
    model.setHandler(request => {
      const prompt = lastUserText(request)
      if (prompt === ASK_PROMPT) return turnOf(request) === 0 ? { kind: 'message', content: [{ type: 'tool_use', name: 'ask_user', input: { question: 'Which color?', options: ['red', 'blue'] } }] } : streamedWords(2, 10, 'thanks')
      if (prompt === APPROVE_PROMPT) return turnOf(request) === 0 ? { kind: 'message', content: [{ type: 'tool_use', name: 'write_file', input: NOTE }] } : streamedWords(3, 10, 'written')
      if (prompt.startsWith('slow')) return streamedWords(60, 50)
      return streamedWords(20, 40)
    })
    stack = await startTestStack({ ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_BASE_URL: model.url, ZIDANE_MODEL: 'claude-test' })
  }, 120_000)
  afterAll(async () => {
    await stack?.destroy()
    await model?.close()
  })

  const transport = (key = s().apiKeys[0]) => new DefaultChatTransport<UIMessage>({
    api: '',
    headers: { authorization: `Bearer ${key}` },
    prepareSendMessagesRequest: ({ id, messages, trigger, messageId, body }) => ({ api: `${s().gatewayUrl}/v1/sessions/${id}/chat`, body: { ...body, id, messages, trigger, ...(messageId === undefined ? {} : { messageId }) } }),
    prepareReconnectToStreamRequest: ({ id }) => ({ api: `${s().gatewayUrl}/v1/sessions/${id}/chat/stream` }),
  })
  const send = (sessionId: string, messages: UIMessage[], body: object = {}) =>
    transport().sendMessages({ chatId: sessionId, messages, trigger: 'submit-message', messageId: undefined, abortSignal: undefined, body })
  const view = async (sessionId: string): Promise<View> => (await s().request(`/v1/sessions/${sessionId}`)).json() as Promise<View>
  const chatPost = (sessionId: string, body: unknown, key?: string) => s().request(`/v1/sessions/${sessionId}/chat`, { method: 'POST', body: JSON.stringify(body), ...(key === undefined ? {} : { key }) })

  it('POST /chat streams the text while the model writes it, and it ends as the journaled turn text', async () => {
    const response = await s().request('/v1/sessions/chat-basic/chat', { method: 'POST', body: JSON.stringify({ id: 'chat-basic', messages: [userMessage('hello')], trigger: 'submit-message' }) })
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1')
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
    await response.body?.cancel()
    const chunks = await collect(await send('chat-basic2', [userMessage('hello')]))
    const types = chunks.map(({ chunk }) => chunk.type)
    expect(types[0]).toBe('start')
    expect(types.at(-1)).toBe('finish')
    const deltas = chunks.filter(({ chunk }) => chunk.type === 'text-delta')
    expect(deltas.length).toBeGreaterThan(3)
    // Live: the first words arrive well before the run ends (20 words, one every 40 ms).
    expect((chunks.at(-1)?.atMs ?? 0) - (deltas[0]?.atMs ?? 0)).toBeGreaterThan(300)
    const message = await messageOf(chunks.map(({ chunk }) => chunk))
    const journaled = await view('chat-basic2')
    const turnText = journaled.turns.filter(turn => turn.role === 'assistant').flatMap(turn => turn.content).flatMap(block => (block.type === 'text' ? [block.text] : [])).join('')
    expect(textOf(message)).toBe(turnText)
    expect(textOf(message)).toBe(Array.from({ length: 20 }, (_, index) => `word${index}`).join(' '))
    expect(message?.metadata).toMatchObject({ runId: journaled.runs[0]?.id, status: 'completed', usage: expect.any(Object) })
  })

  it('GET /chat/stream resumes the active run from its start, and answers 204 once it ended', async () => {
    const live = await send('chat-resume', [userMessage('slow resume')])
    const reader = live.getReader()
    while ((await reader.read()).value?.type !== 'text-delta') { /* until the text streams */ }
    await reader.cancel()
    const resumed = await transport().reconnectToStream({ chatId: 'chat-resume' })
    expect(resumed).not.toBeNull()
    const chunks = await collect(resumed as ReadableStream<UIMessageChunk>)
    const message = await messageOf(chunks.map(({ chunk }) => chunk))
    expect(textOf(message)).toBe(Array.from({ length: 60 }, (_, index) => `word${index}`).join(' '))
    expect(chunks.at(-1)?.chunk.type).toBe('finish')
    expect(await transport().reconnectToStream({ chatId: 'chat-resume' })).toBeNull()
  })

  it('a message while a run runs steers it: its stream is a new message that answers the steering message', async () => {
    const first = (await send('chat-steer', [userMessage('slow steer')])).getReader()
    let firstChunk = await first.read()
    while (firstChunk.value?.type !== 'text-delta') firstChunk = await first.read()
    await first.cancel()
    const chunks = await collect(await send('chat-steer', [userMessage('slow steer'), { id: 'a1', role: 'assistant', parts: [] }, userMessage('steer: also this')]))
    const message = await messageOf(chunks.map(({ chunk }) => chunk))
    expect(textOf(message)).toBe(Array.from({ length: 20 }, (_, index) => `word${index}`).join(' '))
    expect(chunks.at(-1)?.chunk).toEqual({ type: 'finish', finishReason: 'stop' })
    const runs = (await view('chat-steer')).runs
    expect(message?.id).not.toBe(runs[0]?.id)
  })

  it('a cancel mid-stream ends the stream with abort, and nothing after it', async () => {
    let cancelled = false
    const chunks = await collect(await send('chat-cancel', [userMessage('slow cancel')]), chunk => {
      if (chunk.type !== 'text-delta' || cancelled) return
      cancelled = true
      void s().request('/v1/sessions/chat-cancel/cancel', { method: 'POST' })
    })
    expect(chunks.at(-1)?.chunk.type).toBe('abort')
    expect(chunks.map(({ chunk }) => chunk.type)).not.toContain('finish')
    expect((await view('chat-cancel')).runs[0]?.status).toBe('cancelled')
  })

  it('an approval ends the stream; the next POST with the tool-approval-response runs the call once and streams the rest', async () => {
    const first = await collect(await send('chat-approve', [userMessage(APPROVE_PROMPT)], { policy: { approve: ['write_file'] } }))
    const request = first.find(({ chunk }) => chunk.type === 'tool-approval-request')?.chunk
    expect(request).toMatchObject({ type: 'tool-approval-request', approvalId: expect.any(String), toolCallId: expect.any(String) })
    expect(first.at(-1)?.chunk).toEqual({ type: 'finish', finishReason: 'tool-calls' })
    // A reload while the run waits: the resume replays the run up to the same approval request, and ends.
    const replayed = await collect(await transport().reconnectToStream({ chatId: 'chat-approve' }) as ReadableStream<UIMessageChunk>)
    expect(replayed.filter(({ chunk }) => chunk.type === 'tool-approval-request').map(({ chunk }) => chunk)).toEqual([request])
    expect(replayed.at(-1)?.chunk).toEqual({ type: 'finish', finishReason: 'tool-calls' })
    const asked = await messageOf(first.map(({ chunk }) => chunk))
    const tool = asked?.parts.find(part => part.type === 'dynamic-tool')
    expect(tool).toMatchObject({ toolName: 'write_file', input: NOTE, state: 'approval-requested' })
    // What `addToolApprovalResponse` does to the part, then the next request `useChat` sends.
    const responded = structuredClone(asked as UIMessage)
    Object.assign(responded.parts.find(part => part.type === 'dynamic-tool') ?? {}, { state: 'approval-responded', approval: { id: (request as { approvalId: string }).approvalId, approved: true } })
    const again = await collect(await send('chat-approve', [userMessage(APPROVE_PROMPT), responded]))
    expect(again[0]?.chunk).toMatchObject({ type: 'start', messageId: responded.id })
    expect(again.at(-1)?.chunk).toEqual({ type: 'finish', finishReason: 'stop' })
    const message = await messageOf(again.map(({ chunk }) => chunk), responded)
    expect(message?.parts.filter(part => part.type === 'dynamic-tool').map(part => part.state)).toEqual(['output-available'])
    expect(textOf(message)).toBe('written0 written1 written2')
    const done = await view('chat-approve')
    expect(done.turns.flatMap(turn => turn.content).filter(block => block.type === 'tool_result').map(block => block.isError === true)).toEqual([false])
    expect(model?.requests.filter(recorded => lastUserText(recorded) === APPROVE_PROMPT).length).toBe(2)
  })

  it('an ask_user question is a data-question part with its answer link; the answer continues the same stream', async () => {
    let answered: Promise<Response> | undefined
    const chunks = await collect(await send('chat-ask', [userMessage(ASK_PROMPT)]), chunk => {
      if (chunk.type !== 'data-question' || answered !== undefined) return
      const { answerUrl } = chunk.data as { answerUrl: string }
      const url = new URL(answerUrl)
      answered = fetch(`${s().gatewayUrl}${url.pathname}${url.search}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ answer: 'blue' }) })
    })
    expect((await answered)?.status).toBe(200)
    const question = chunks.find(({ chunk }) => chunk.type === 'data-question')?.chunk
    expect(question).toMatchObject({ data: { kind: 'ask_user', question: 'Which color?', options: ['red', 'blue'], callId: expect.any(String) } })
    const message = await messageOf(chunks.map(({ chunk }) => chunk))
    expect(message?.parts.find(part => part.type === 'dynamic-tool')).toMatchObject({ toolName: 'ask_user', state: 'output-available' })
    expect(textOf(message)).toBe('thanks0 thanks1')
    expect(chunks.at(-1)?.chunk).toEqual({ type: 'finish', finishReason: 'stop' })
  })

  it('a tool-approval-response for an approval that is not pending gets 409 approval_not_pending', async () => {
    const assistant = { id: 'a1', role: 'assistant', parts: [{ type: 'dynamic-tool', toolName: 'write_file', toolCallId: 'c1', state: 'approval-responded', input: {}, approval: { id: 'sign_not_pending', approved: true } }] }
    const response = await chatPost('chat-basic2', { messages: [userMessage('x'), assistant] })
    expect(response.status).toBe(409)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('approval_not_pending')
  })

  it("another key's session does not exist for a key: nothing to resume (204), 404 session_not_found to answer", async () => {
    const other = s().apiKeys[1]
    const running = await send('chat-other', [userMessage('slow other')])
    const resumed = await s().request('/v1/sessions/chat-other/chat/stream', { key: other })
    expect(resumed.status).toBe(204)
    expect(await transport().reconnectToStream({ chatId: 'never-ran' })).toBeNull()
    await running.cancel()
    const assistant = { id: 'a1', role: 'assistant', parts: [{ type: 'dynamic-tool', toolName: 'x', toolCallId: 'c1', state: 'approval-responded', input: {}, approval: { id: 'sign_x', approved: true } }] }
    expect((await chatPost('chat-basic2', { messages: [userMessage('x'), assistant] }, other)).status).toBe(404)
    await waitFor(async () => (await view('chat-basic2')).runs.length === 1 || undefined, 5_000, 'no run started by the other key')
  })
})

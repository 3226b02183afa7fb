import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { lastUserText, start, streamedWords } from '../../support/anthropic-server'
import type { FakeAnthropicServer, RecordedRequest } from '../../support/anthropic-server'
import { openSseViewer } from '../../support/sse-client'
import type { SseFrame, SseViewer } from '../../support/sse-client'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

const API_KEY = 'sk-ant-e2e'

/** The text of the latest user message that has text: the prompt of the run (tool results carry none). */
function turnOf(request: RecordedRequest): number {
  return ((request.body?.messages as unknown as Array<{ role: string }> | undefined) ?? []).filter(message => message.role === 'assistant').length
}

/** A text of `words` numbered words, streamed one word every `intervalMs`. */
const isDelta = (frame: SseFrame): boolean => frame.event === 'model:delta'
/** The event's own fields: durable and live events alike are `{ type, data }` (durable ones with `seq` and `at`). */
const payload = (frame: SseFrame | undefined): Record<string, unknown> => (frame?.data.data ?? {}) as Record<string, unknown>

/** The text the deltas of `attempt` spell, in offset order. */
function textOfAttempt(frames: SseFrame[], attempt: unknown): string {
  return frames.map(payload).filter((delta, index) => isDelta(frames[index] as SseFrame) && delta.attempt === attempt && delta.kind === 'text')
    .sort((first, second) => Number(first.offset) - Number(second.offset))
    .map(delta => String(delta.text)).join('')
}

describe('live model deltas on the event stream', { timeout: 180_000 }, () => {
  let stack: TestStack | undefined
  let model: FakeAnthropicServer | undefined
  const viewers: SseViewer[] = []
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  const m = (): FakeAnthropicServer => { if (!model) throw new Error('no model'); return model }
  printStackOutputOnFailure(() => stack)

  let overloads = 0

  beforeAll(async () => {
    model = await start({ apiKey: API_KEY })
    m().setHandler(request => {
      const prompt = lastUserText(request)
      if (prompt === 'crash mid-stream') return streamedWords(80, 50)
      if (prompt === 'reconnect mid-step') return streamedWords(40, 50)
      if (prompt === 'spawn a streaming child') return turnOf(request) === 0 ? { kind: 'message', content: [{ type: 'tool_use', name: 'spawn', input: { task: 'child streams' } }] } : streamedWords(3, 10)
      if (prompt === 'child streams') return streamedWords(30, 50)
      if (prompt === 'overload mid-stream') return overloads++ === 0 ? { kind: 'overloaded', midStream: true, afterEvents: 6 } : streamedWords(20, 30)
      return streamedWords(20, 30)
    })
    stack = await startTestStack({ ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_BASE_URL: m().url, ZIDANE_MODEL: 'claude-test' }, { tenants: 1 })
  }, 120_000)
  afterAll(async () => {
    for (const viewer of viewers) viewer.close()
    await stack?.destroy()
    await model?.close()
  })

  const prompt = async (sessionId: string, text: string, query = '', status = 202): Promise<void> => {
    const response = await s().request(`/v1/sessions/${sessionId}/prompts${query}`, { method: 'POST', body: JSON.stringify({ prompt: text }) })
    expect(response.status).toBe(status)
    await response.arrayBuffer()
  }
  /** A viewer of the session's events (it opens before the session exists too, and waits for its first event). */
  const view = async (sessionId: string, headers: Record<string, string> = {}): Promise<SseViewer> => {
    for (let tries = 0; ; tries++) {
      const viewer = await openSseViewer(`${s().gatewayUrl}/v1/sessions/${sessionId}/events`, { authorization: `Bearer ${s().apiKeys[0]}`, ...headers })
      if (viewer.status === 200) { viewers.push(viewer); return viewer }
      viewer.close()
      if (tries > 200) throw new Error(`the event stream answered ${viewer.status}`)
      await new Promise(resolve => setTimeout(resolve, 50))
    }
  }

  it('a viewer sees the deltas while the model streams, then turn:end whose text equals them', async () => {
    await prompt('live-basic', 'stream please')
    const viewer = await view('live-basic')
    const turnEnd = await viewer.waitFor(frame => frame.event === 'turn:end')
    const before = viewer.frames.slice(0, viewer.frames.indexOf(turnEnd))
    const deltas = before.filter(isDelta)
    expect(deltas.length).toBeGreaterThanOrEqual(5)
    expect(deltas.every(frame => frame.id === undefined)).toBe(true)
    expect(payload(deltas[0])).toMatchObject({ runId: payload(turnEnd).runId, turn: 1, kind: 'text', offset: 0 })
    expect(turnEnd.receivedAtMs - (deltas[0]?.receivedAtMs ?? 0)).toBeGreaterThan(200)
    expect(textOfAttempt(before, payload(deltas.at(-1)).attempt)).toBe(payload(turnEnd).text)
  })

  it('a SIGKILL of the services mid-stream yields model:superseded, then the new attempt from offset 0, and turn:end equals the new attempt', async () => {
    await prompt('live-crash', 'crash mid-stream')
    const viewer = await view('live-crash')
    await viewer.waitFor(frame => isDelta(frame) && Number(payload(frame).offset) > 30)
    const firstAttempt = payload(viewer.frames.find(isDelta)).attempt
    s().services().current()?.kill('SIGKILL')
    const superseded = await viewer.waitFor(frame => frame.event === 'model:superseded')
    expect(payload(superseded)).toMatchObject({ attempt: firstAttempt, turn: 1 })
    const turnEnd = await viewer.waitFor(frame => frame.event === 'turn:end')
    const after = viewer.frames.slice(viewer.frames.indexOf(superseded) + 1, viewer.frames.indexOf(turnEnd)).filter(isDelta)
    expect(after.length).toBeGreaterThan(5)
    expect(after.every(frame => payload(frame).attempt === payload(superseded).nextAttempt)).toBe(true)
    expect(payload(after[0]).offset).toBe(0)
    expect(textOfAttempt(after, payload(superseded).nextAttempt)).toBe(payload(turnEnd).text)
    expect(m().requests.filter(request => lastUserText(request) === 'crash mid-stream').length).toBeGreaterThanOrEqual(2)
  })

  it('an overload retried mid-stream yields model:superseded for the partial attempt, then the retry from offset 0', async () => {
    await prompt('live-overload', 'warm up', '?wait=true', 200)
    const viewer = await view('live-overload')
    await prompt('live-overload', 'overload mid-stream')
    const partial = await viewer.waitFor(isDelta)
    const superseded = await viewer.waitFor(frame => frame.event === 'model:superseded')
    expect(payload(superseded)).toMatchObject({ runId: payload(partial).runId, attempt: payload(partial).attempt })
    const turnEnd = await viewer.waitFor(frame => frame.event === 'turn:end', 60_000, viewer.frames.indexOf(superseded))
    const retried = viewer.frames.slice(viewer.frames.indexOf(superseded) + 1, viewer.frames.indexOf(turnEnd)).filter(isDelta)
    expect(payload(retried[0]).offset).toBe(0)
    expect(textOfAttempt(retried, payload(superseded).nextAttempt)).toBe(payload(turnEnd).text)
  })

  it("a child's deltas stream live with its label while the parent's spawn runs", async () => {
    await prompt('live-child', 'spawn a streaming child')
    const viewer = await view('live-child')
    const childDelta = await viewer.waitFor(frame => isDelta(frame) && payload(frame).label !== undefined)
    const childEnd = await viewer.waitFor(frame => frame.event === 'child:end')
    expect(viewer.frames.indexOf(childDelta)).toBeLessThan(viewer.frames.indexOf(childEnd))
    expect(payload(childDelta).label).toBe(payload(childEnd).label)
    const childDeltas = viewer.frames.filter(frame => isDelta(frame) && payload(frame).label !== undefined)
    expect(textOfAttempt(childDeltas, payload(childDeltas.at(-1)).attempt)).toBe(Array.from({ length: 30 }, (_, index) => `word${index}`).join(' '))
  })

  it('a viewer reconnecting with Last-Event-ID mid-step gets no durable event twice, then the attempt in progress from its start', async () => {
    await prompt('live-reconnect', 'reconnect mid-step')
    const first = await view('live-reconnect')
    await first.waitFor(frame => isDelta(frame) && Number(payload(frame).offset) > 40)
    const lastId = first.frames.filter(frame => frame.id !== undefined).at(-1)?.id ?? '0'
    first.close()
    const second = await view('live-reconnect', { 'last-event-id': lastId })
    const turnEnd = await second.waitFor(frame => frame.event === 'turn:end')
    const durable = second.frames.filter(frame => frame.id !== undefined)
    expect(durable.every(frame => Number(frame.id) > Number(lastId))).toBe(true)
    const deltas = second.frames.slice(0, second.frames.indexOf(turnEnd)).filter(isDelta)
    expect(payload(deltas[0]).offset).toBe(0)
    expect(textOfAttempt(deltas, payload(deltas.at(-1)).attempt)).toBe(payload(turnEnd).text)
  })
})

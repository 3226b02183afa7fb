import { EventEmitter } from 'node:events'
import type { ServerResponse } from 'node:http'
import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai'
import { describe, expect, it, vi } from 'vitest'
import type { TimelineItem } from '../../../ingress-gateway/protocols/timeline-items'
import { DONE_FRAME, pipeUiMessageStream } from '../../../ingress-gateway/protocols/ui-message-sse'

/** A response that records what is written; `unsent` bytes pretend the client reads nothing past them. */
class FakeResponse extends EventEmitter {
  frames: string[] = []
  destroyed = false
  ended = false
  writableNeedDrain = false
  constructor(private readonly unsent = 0) { super() }
  get writableLength(): number { return this.unsent + this.frames.join('').length }
  write(chunk: string): boolean { this.frames.push(chunk); return true }
  end(): void { this.ended = true }
  destroy(): void { this.destroyed = true }
}

async function* itemsOf(items: TimelineItem[]): AsyncGenerator<TimelineItem> {
  for (const item of items) yield item
}

const chunksOf = (response: FakeResponse): UIMessageChunk[] => response.frames.filter(frame => frame !== DONE_FRAME).map(frame => JSON.parse(frame.replace(/^data: /, '')) as UIMessageChunk)

async function messageOf(chunks: UIMessageChunk[]): Promise<UIMessage | undefined> {
  const stream = new ReadableStream<UIMessageChunk>({ start(controller) { for (const chunk of chunks) controller.enqueue(chunk); controller.close() } })
  let last: UIMessage | undefined
  for await (const built of readUIMessageStream({ stream })) last = built
  return last
}

const run = (runId: string, prompt: string, words: string[]): TimelineItem[] => [
  { type: 'run-start', runId, prompt, seq: 1 }, { type: 'step-start', runId, step: 0 },
  ...words.map((delta): TimelineItem => ({ type: 'text-delta', runId, step: 0, delta })),
  { type: 'step-end', runId, step: 0, text: words.join(''), textTruncated: false }, { type: 'run-end', runId, status: 'completed', text: words.join(''), seq: 9 },
]

describe('the UI message stream on the wire', () => {
  it('writes one `data:` frame per chunk, then [DONE], and ends the response', async () => {
    const response = new FakeResponse()
    const complete = await pipeUiMessageStream(response as unknown as ServerResponse, itemsOf(run('r1', 'hi', ['a', 'b'])), { runId: 'r1' }, new AbortController().signal)
    expect(complete).toBe(true)
    expect(response.frames.every(frame => /^data: .+\n\n$/.test(frame))).toBe(true)
    expect(response.frames.at(-1)).toBe('data: [DONE]\n\n')
    expect(response.ended).toBe(true)
    expect(chunksOf(response)[0]).toEqual({ type: 'start', messageId: 'r1' })
  })

  it('without a run id, shows the first run that starts (earlier runs skipped)', async () => {
    const response = new FakeResponse()
    const items: TimelineItem[] = [{ type: 'text-delta', runId: 'r0', step: 3, delta: 'old' }, { type: 'run-end', runId: 'r0', status: 'completed', text: '', seq: 2 }, ...run('r1', 'hi', ['new'])]
    await pipeUiMessageStream(response as unknown as ServerResponse, itemsOf(items), {}, new AbortController().signal)
    const message = await messageOf(chunksOf(response))
    expect(message?.id).toBe('r1')
    expect(message?.parts.flatMap(part => (part.type === 'text' ? [part.text] : []))).toEqual(['new'])
  })

  it('a steering message whose run ended before taking it shows the run it started', async () => {
    const response = new FakeResponse()
    const items = [...run('r1', 'first', ['one']), ...run('r2', 'unrelated queued prompt', ['no']), ...run('r3', 'also b', ['b too'])]
    await pipeUiMessageStream(response as unknown as ServerResponse, itemsOf(items), { runId: 'r1', messageId: 'm2', resumeAt: { steerText: 'also b' } }, new AbortController().signal)
    const message = await messageOf(chunksOf(response))
    expect(message?.id).toBe('m2')
    expect(message?.parts.flatMap(part => (part.type === 'text' ? [part.text] : []))).toEqual(['b too'])
    expect(chunksOf(response).at(-1)).toEqual({ type: 'finish', finishReason: 'stop' })
  })

  it('cuts off a client that holds more than 1 MiB unsent instead of buffering for it', async () => {
    const response = new FakeResponse(1024 * 1024)
    const complete = await pipeUiMessageStream(response as unknown as ServerResponse, itemsOf(run('r1', 'hi', ['a'])), { runId: 'r1' }, new AbortController().signal)
    expect(complete).toBe(false)
    expect(response.destroyed).toBe(true)
    expect(response.frames).toEqual([])
  })

  it('stops when the client leaves, without [DONE]', async () => {
    const response = new FakeResponse()
    const left = new AbortController()
    async function* endless(): AsyncGenerator<TimelineItem> {
      yield { type: 'run-start', runId: 'r1', prompt: 'hi', seq: 1 }
      left.abort()
      yield { type: 'step-start', runId: 'r1', step: 0 }
      await new Promise(() => undefined)
    }
    expect(await pipeUiMessageStream(response as unknown as ServerResponse, endless(), { runId: 'r1' }, left.signal)).toBe(false)
    expect(response.frames).not.toContain(DONE_FRAME)
    expect(response.ended).toBe(true)
  })

  it('sends a keep-alive comment every 15 s while the run is quiet', async () => {
    vi.useFakeTimers()
    try {
      const response = new FakeResponse()
      let release = (): void => undefined
      async function* quiet(): AsyncGenerator<TimelineItem> {
        yield { type: 'run-start', runId: 'r1', prompt: 'hi', seq: 1 }
        await new Promise<void>(resolve => { release = resolve })
        yield { type: 'run-end', runId: 'r1', status: 'completed', text: '', seq: 2 }
      }
      const piped = pipeUiMessageStream(response as unknown as ServerResponse, quiet(), { runId: 'r1' }, new AbortController().signal)
      await vi.advanceTimersByTimeAsync(31_000)
      expect(response.frames.filter(frame => frame === ': keep-alive\n\n')).toHaveLength(2)
      release()
      expect(await piped).toBe(true)
    } finally {
      vi.useRealTimers()
    }
  })

  it('cuts off a client that stops reading instead of waiting for it forever (live deltas would queue meanwhile)', async () => {
    vi.useFakeTimers()
    try {
      const response = new FakeResponse()
      response.writableNeedDrain = true
      let resolved: boolean | undefined
      const piped = pipeUiMessageStream(response as unknown as ServerResponse, itemsOf(run('r1', 'hi', ['a', 'b'])), { runId: 'r1' }, new AbortController().signal).then(complete => { resolved = complete })
      await vi.advanceTimersByTimeAsync(60_000)
      expect(resolved).toBe(false)
      expect(response.destroyed).toBe(true)
      await piped
    } finally {
      vi.useRealTimers()
    }
  })
})

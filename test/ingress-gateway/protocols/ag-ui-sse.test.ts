import { EventEmitter } from 'node:events'
import type { ServerResponse } from 'node:http'
import { describe, expect, it } from 'vitest'
import { MAX_VIEWER_BUFFER_BYTES } from '../../../ingress-gateway/bounded-write'
import { AgUiMapping, runStartedEvent } from '../../../ingress-gateway/protocols/ag-ui-events'
import { pipeAgUiEvents } from '../../../ingress-gateway/protocols/ag-ui-sse'
import type { TimelineItem } from '../../../ingress-gateway/protocols/timeline-items'

/** A response whose client reads nothing: every written byte stays unsent. */
class StalledResponse extends EventEmitter {
  writableLength = 0
  destroyed = false
  ended = false
  written: string[] = []
  get writableNeedDrain(): boolean { return this.writableLength > 16_384 }
  write(chunk: string): boolean { this.written.push(chunk); this.writableLength += Buffer.byteLength(chunk); return !this.writableNeedDrain }
  destroy(): void { this.destroyed = true; this.emit('close') }
  end(): void { this.ended = true }
}

const R = 'run_1'

async function* items(list: TimelineItem[], pulled: { count: number }): AsyncGenerator<TimelineItem> {
  for (const item of list) {
    pulled.count++
    yield item
  }
}

describe('the AG-UI SSE writer', () => {
  it('writes `data: <json>` frames until the AG-UI run ends, then ends the response without reading further', async () => {
    const raw = new StalledResponse()
    const pulled = { count: 0 }
    const list: TimelineItem[] = [{ type: 'run-start', runId: R, prompt: 'p', seq: 1 }, { type: 'run-end', runId: R, status: 'completed', text: 'ok', seq: 2 }, { type: 'step-start', runId: R, step: 1 }]
    const whole = await pipeAgUiEvents(raw as unknown as ServerResponse, [runStartedEvent('s', 'c')], items(list, pulled), new AgUiMapping({ threadId: 's', runId: 'c' }), new AbortController().signal)
    expect(whole).toBe(true)
    expect(raw.ended).toBe(true)
    expect(pulled.count).toBe(2)
    expect(raw.written.map(frame => JSON.parse(frame.replace(/^data: /, '')) as { type: string }).map(event => event.type)).toEqual(['RUN_STARTED', 'RUN_FINISHED'])
    expect(raw.written.every(frame => frame.startsWith('data: ') && frame.endsWith('\n\n'))).toBe(true)
  })

  it('cuts off a client that holds more than the buffer limit unsent instead of buffering for it', async () => {
    const raw = new StalledResponse()
    raw.writableLength = MAX_VIEWER_BUFFER_BYTES - 10
    const pulled = { count: 0 }
    const list: TimelineItem[] = [{ type: 'run-start', runId: R, prompt: 'p', seq: 1 }, { type: 'step-start', runId: R, step: 1 }, { type: 'text-delta', runId: R, step: 1, delta: 'x'.repeat(100) }]
    const whole = await pipeAgUiEvents(raw as unknown as ServerResponse, [], items(list, pulled), new AgUiMapping({ threadId: 's', runId: 'c' }), new AbortController().signal)
    expect(whole).toBe(false)
    expect(raw.destroyed).toBe(true)
    expect(raw.written).toEqual([])
  })
})

import { describe, expect, it } from 'vitest'
import type { LiveEvent } from '../../ingress-gateway/live-deltas'
import { formatLiveEvent, streamLiveEvents } from '../../ingress-gateway/live-sse'
import { fakeLive } from './helpers/fake-live'

const delta: LiveEvent = { type: 'model:delta', data: { runId: 'r1', turn: 1, attempt: 'a1', kind: 'text', offset: 0, text: 'Hi' } }


describe('live events on the SSE stream', () => {
  it('frames a live event with its type and data and no id, so Last-Event-ID stays on the durable log', () => {
    expect(formatLiveEvent(delta)).toBe('event: model:delta\ndata: {"type":"model:delta","data":{"runId":"r1","turn":1,"attempt":"a1","kind":"text","offset":0,"text":"Hi"}}\n\n')
    expect(formatLiveEvent({ type: 'model:superseded', data: { runId: 'r1', turn: 1, attempt: 'a1', nextAttempt: 'a2' } }))
      .toBe('event: model:superseded\ndata: {"type":"model:superseded","data":{"runId":"r1","turn":1,"attempt":"a1","nextAttempt":"a2"}}\n\n')
  })

  it('writes live events until the viewer leaves, then unsubscribes', () => {
    const live = fakeLive()
    const frames: string[] = []
    const gone = new AbortController()
    streamLiveEvents({ write: chunk => frames.push(chunk) > 0, writableLength: 0, destroyed: false, destroy: () => undefined }, live, 't~s', gone.signal)
    live.emit(delta)
    gone.abort()
    live.emit(delta)
    expect(frames).toHaveLength(1)
    expect(live.subscribers()).toBe(0)
  })
})

import { createServer } from 'node:http'
import type { ServerResponse } from 'node:http'
import { connect } from 'node:net'
import type { AddressInfo } from 'node:net'
import { setImmediate as yieldToSockets } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { useRawSockets } from '../helpers/raw-sockets'
import { MAX_VIEWER_BUFFER_BYTES } from '../../ingress-gateway/bounded-write'
import { streamLiveEvents } from '../../ingress-gateway/live-sse'
import { fakeLive } from './helpers/fake-live'

const raw = useRawSockets()


/** An SSE viewer on a raw socket; `read: false` never reads a byte (a stuck browser tab). */
function viewer(port: number, read: boolean): { received: () => number } {
  const socket = connect(port, '127.0.0.1')
  raw.track(socket)
  let received = 0
  socket.write('GET /events HTTP/1.1\r\nhost: gateway\r\n\r\n')
  if (read) socket.on('data', (chunk: Buffer) => { received += chunk.length })
  else socket.pause()
  return { received: () => received }
}

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const start = performance.now()
  while (!condition()) {
    if (performance.now() - start > timeoutMs) throw new Error('timed out waiting')
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

describe('live SSE backpressure', () => {
  it('cuts off a viewer that reads nothing before its unsent bytes pass the bound; a reading viewer gets every delta', async () => {
    const live = fakeLive()
    const responses: ServerResponse[] = []
    const server = raw.serve(createServer((_request, response) => {
      responses.push(response)
      response.writeHead(200, { 'content-type': 'text/event-stream' })
      const gone = new AbortController()
      response.once('close', () => gone.abort())
      streamLiveEvents(response, live, 't~s', gone.signal)
    }))
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as AddressInfo).port
    viewer(port, false)
    const reader = viewer(port, true)
    await waitFor(() => live.subscribers() === 2)
    const text = 'z'.repeat(4096)
    let maxUnsent = 0
    const deltas = 10_240
    for (let index = 0; index < deltas; index++) {
      live.emit({ type: 'model:delta', data: { runId: 'r1', turn: 1, attempt: 'a1', kind: 'text', offset: index * text.length, text } })
      maxUnsent = Math.max(maxUnsent, responses[0]!.writableLength)
      if (index % 16 === 0) await yieldToSockets()
    }
    await waitFor(() => reader.received() >= deltas * text.length)
    console.info(`stuck SSE viewer: most unsent bytes ${maxUnsent} (bound ${MAX_VIEWER_BUFFER_BYTES}); reader got ${reader.received()} bytes`)
    expect(maxUnsent).toBeLessThanOrEqual(MAX_VIEWER_BUFFER_BYTES)
    expect(responses[0]!.destroyed).toBe(true)
    expect(responses[1]!.destroyed).toBe(false)
    expect(live.subscribers()).toBe(1)
  }, 30_000)
})

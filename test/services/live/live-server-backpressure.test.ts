import type { ServerResponse } from 'node:http'
import { connect } from 'node:net'
import type { Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import { setImmediate as yieldToSockets } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { useRawSockets } from '../../helpers/raw-sockets'
import type { LiveDelta } from '../../../contract/live-delta'
import { liveStreamPath } from '../../../contract/live-delta'
import { createLiveHub } from '../../../services/live/live-hub'
import { createLiveServer } from '../../../services/live/live-server'
import { MAX_LIVE_BUFFER_BYTES } from '../../../services/live/paced-stream'

const token = 'internal-token-0123456789'
const sessionKey = 't~slow'
const raw = useRawSockets()

/** A live stream request on a raw socket; `read: false` never reads a byte of the answer (a stuck viewer). */
function openStream(port: number, read: boolean): { socket: Socket; received: () => number } {
  const socket = connect(port, '127.0.0.1')
  raw.track(socket)
  let received = 0
  socket.write(`GET ${liveStreamPath(sessionKey)} HTTP/1.1\r\nhost: hub\r\nauthorization: Bearer ${token}\r\n\r\n`)
  if (read) socket.on('data', (chunk: Buffer) => { received += chunk.length })
  else socket.pause()
  return { socket, received: () => received }
}

function delta(offset: number, text: string): LiveDelta {
  return { sessionKey, runId: 'r1', turn: 1, attempt: 'a1', kind: 'text', offset, text }
}

describe('live server backpressure', () => {
  it('cuts off a viewer that reads nothing before its unsent bytes pass the bound, and keeps serving a reading one', async () => {
    const hub = createLiveHub()
    const server = raw.serve(createLiveServer(hub, { token }))
    const responses: ServerResponse[] = []
    server.on('request', (_request, response: ServerResponse) => responses.push(response))
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as AddressInfo).port
    openStream(port, false)
    const reader = openStream(port, true)
    await waitFor(() => hub.size() === 1 && responses.length === 2)
    const text = 'x'.repeat(4096)
    let maxUnsent = 0
    // 40 MiB of deltas, far more than the kernel's socket buffers and the bound: only a bound keeps the stuck one small.
    for (let index = 0; index < 10_240; index++) {
      hub.publish(delta(index * text.length, text))
      maxUnsent = Math.max(maxUnsent, responses[0]!.writableLength)
      if (index % 16 === 0) await yieldToSockets()
    }
    await waitFor(() => reader.received() >= 10_240 * text.length)
    console.info(`stuck viewer: most unsent bytes ${maxUnsent} (bound ${MAX_LIVE_BUFFER_BYTES}); reader got ${reader.received()} bytes`)
    expect(maxUnsent).toBeLessThanOrEqual(MAX_LIVE_BUFFER_BYTES)
    expect(responses[0]!.destroyed).toBe(true)
    expect(responses[1]!.destroyed).toBe(false)
  }, 30_000)

  it('paces the replay of a long attempt instead of cutting off a late viewer', async () => {
    const hub = createLiveHub()
    const text = 'y'.repeat(1000)
    for (let index = 0; index < 1900; index++) hub.publish(delta(index * text.length, text))
    const server = raw.serve(createLiveServer(hub, { token }))
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const late = openStream((server.address() as AddressInfo).port, true)
    await waitFor(() => late.received() >= 1900 * text.length)
    hub.publish(delta(1900 * text.length, 'end'))
    await waitFor(() => late.received() >= 1900 * text.length + 100)
    expect(late.socket.destroyed).toBe(false)
  }, 30_000)
})

async function waitFor(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const start = performance.now()
  while (!condition()) {
    if (performance.now() - start > timeoutMs) throw new Error('timed out waiting')
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

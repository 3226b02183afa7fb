import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createLiveDeltas } from '../../ingress-gateway/live-deltas'
import type { LiveEvent } from '../../ingress-gateway/live-deltas'
import type { LiveDelta } from '../../contract/live-delta'
import { createLiveHub } from '../../services/live/live-hub'
import type { LiveHub } from '../../services/live/live-hub'
import { createLiveServer } from '../../services/live/live-server'

const token = 'internal-token-0123456789'
const servers: Server[] = []
const stops: Array<() => void> = []

afterEach(async () => {
  for (const stop of stops.splice(0)) stop()
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  }
})

async function hubServer(hub: LiveHub, port = 0): Promise<{ url: string; port: number; kill: () => Promise<void> }> {
  const server = createLiveServer(hub, { token })
  servers.push(server)
  await new Promise<void>(resolve => server.listen(port, '127.0.0.1', resolve))
  const bound = (server.address() as AddressInfo).port
  const kill = async (): Promise<void> => {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  }
  return { url: `http://127.0.0.1:${bound}`, port: bound, kill }
}

function delta(overrides: Partial<LiveDelta> = {}): LiveDelta {
  return { sessionKey: 't~s', runId: 'r1', turn: 1, attempt: 'a1', kind: 'text', offset: 0, text: 'Hel', ...overrides }
}

function collect(events: LiveEvent[]): (event: LiveEvent) => void {
  return event => events.push(event)
}

async function until(check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!check()) {
    if (performance.now() > deadline) throw new Error('timed out')
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

function texts(events: LiveEvent[]): string[] {
  return events.map(event => (event.type === 'model:delta' ? `${event.data.attempt}:${event.data.text}` : `superseded ${event.data.attempt}`))
}

describe('live deltas in the gateway', () => {
  it('gives a subscriber the current attempt from its start, then live deltas', async () => {
    const hub = createLiveHub()
    hub.publish(delta())
    const { url } = await hubServer(hub)
    const events: LiveEvent[] = []
    stops.push(createLiveDeltas({ urls: [url], token }).subscribeLive('t~s', collect(events)))
    await until(() => events.length === 1)
    hub.publish(delta({ offset: 3, text: 'lo' }))
    await until(() => events.length === 2)
    expect(texts(events)).toEqual(['a1:Hel', 'a1:lo'])
    expect(events[1]).toEqual({ type: 'model:delta', data: { runId: 'r1', turn: 1, attempt: 'a1', kind: 'text', offset: 3, text: 'lo' } })
  })

  it('follows every replica: deltas from any of them reach the subscriber', async () => {
    const [first, second] = [createLiveHub(), createLiveHub()]
    const urls = [(await hubServer(first)).url, (await hubServer(second)).url]
    const events: LiveEvent[] = []
    stops.push(createLiveDeltas({ urls, token }).subscribeLive('t~s', collect(events)))
    await new Promise(resolve => setTimeout(resolve, 100))
    first.publish(delta())
    second.publish(delta({ runId: 'c1', label: 'child', attempt: 'b1', text: 'child' }))
    await until(() => events.length === 2)
    expect(texts(events).sort()).toEqual(['a1:Hel', 'b1:child'])
  })

  it('after the services died mid-attempt, reconnects and announces the earlier attempt as superseded before the new deltas', async () => {
    const before = createLiveHub()
    const first = await hubServer(before)
    const events: LiveEvent[] = []
    stops.push(createLiveDeltas({ urls: [first.url], token, minBackoffMs: 20, maxBackoffMs: 100 }).subscribeLive('t~s', collect(events)))
    await new Promise(resolve => setTimeout(resolve, 100))
    before.publish(delta())
    await until(() => events.length === 1)
    await first.kill()
    const after = createLiveHub()
    after.publish(delta({ attempt: 'a2', text: 'Hello' }))
    await hubServer(after, first.port)
    await until(() => events.length === 3)
    expect(texts(events)).toEqual(['a1:Hel', 'superseded a1', 'a2:Hello'])
  })

  it('does not repeat deltas when it reconnects to the same attempt', async () => {
    const hub = createLiveHub()
    const first = await hubServer(hub)
    const events: LiveEvent[] = []
    stops.push(createLiveDeltas({ urls: [first.url], token, minBackoffMs: 20 }).subscribeLive('t~s', collect(events)))
    hub.publish(delta())
    await until(() => events.length === 1)
    await first.kill()
    hub.publish(delta({ offset: 3, text: 'lo' }))
    await hubServer(hub, first.port)
    await until(() => events.length === 2)
    await new Promise(resolve => setTimeout(resolve, 100))
    expect(texts(events)).toEqual(['a1:Hel', 'a1:lo'])
  })

  it('reports a refused token and keeps trying', async () => {
    const { url } = await hubServer(createLiveHub())
    const errors: string[] = []
    stops.push(createLiveDeltas({ urls: [url], token: 'wrong-token-0123456789', minBackoffMs: 10, maxBackoffMs: 10, onError: (_url, error) => errors.push(String(error)) }).subscribeLive('t~s', () => undefined))
    await until(() => errors.length >= 2)
    expect(errors[0]).toContain('answered 401')
  })
})

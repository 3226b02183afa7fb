import type { ServerResponse } from 'node:http'
import { describe, expect, it } from 'vitest'
import { createLiveDeltas } from '../../ingress-gateway/live-deltas'
import type { LiveEvent } from '../../ingress-gateway/live-deltas'
import type { LiveDelta } from '../../contract/live-delta'
import { createLiveHub } from '../../services/live/live-hub'
import type { LiveHub } from '../../services/live/live-hub'
import { LIVE_TEST_TOKEN, liveServers } from '../helpers/live-server'

const token = LIVE_TEST_TOKEN
const serveHub = liveServers()

/** A hub's live server that counts its open streams. */
async function countingHub(hub: LiveHub): Promise<{ url: string; open: () => number }> {
  const { server, url } = await serveHub(hub)
  let open = 0
  server.on('request', (_request, response: ServerResponse) => {
    open++
    response.once('close', () => open--)
  })
  return { url, open: () => open }
}

function delta(offset: number, text: string): LiveDelta {
  return { sessionKey: 't~s', runId: 'r1', turn: 1, attempt: 'a1', kind: 'text', offset, text }
}

async function until(check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!check()) {
    if (performance.now() > deadline) throw new Error('timed out')
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

function texts(events: LiveEvent[]): string {
  return events.map(event => (event.type === 'model:delta' ? event.data.text : '|superseded|')).join('')
}

describe('one upstream per followed session', () => {
  it('shares one hub connection among the viewers of a session; a late viewer still gets the attempt from its start', async () => {
    const hub = createLiveHub()
    const { url, open } = await countingHub(hub)
    const live = createLiveDeltas({ urls: [url], token })
    const first: LiveEvent[] = []
    const second: LiveEvent[] = []
    const third: LiveEvent[] = []
    const leaveFirst = live.subscribeLive('t~s', event => first.push(event))
    await until(() => open() === 1)
    hub.publish(delta(0, 'Hel'))
    await until(() => texts(first) === 'Hel')
    const leaveSecond = live.subscribeLive('t~s', event => second.push(event))
    const leaveThird = live.subscribeLive('t~s', event => third.push(event))
    await until(() => texts(second) === 'Hel' && texts(third) === 'Hel')
    hub.publish(delta(3, 'lo'))
    await until(() => texts(first) === 'Hello' && texts(second) === 'Hello' && texts(third) === 'Hello')
    await new Promise(resolve => setTimeout(resolve, 100))
    expect([texts(first), texts(second), texts(third)]).toEqual(['Hello', 'Hello', 'Hello'])
    expect(open()).toBe(1)
    leaveFirst()
    leaveSecond()
    hub.publish(delta(5, '!'))
    await until(() => texts(third) === 'Hello!')
    expect(open()).toBe(1)
    leaveThird()
    await until(() => open() === 0)
  })
})

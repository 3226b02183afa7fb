import { describe, expect, it } from 'vitest'
import type { LiveDelta, LiveMessage } from '../../../contract/live-delta'
import { liveStreamPath } from '../../../contract/live-delta'
import { createLiveHub } from '../../../services/live/live-hub'
import type { LiveHub } from '../../../services/live/live-hub'
import { LIVE_TEST_TOKEN, liveServers } from '../../helpers/live-server'

const token = LIVE_TEST_TOKEN
const serveHub = liveServers()

async function listen(hub: LiveHub): Promise<string> {
  return (await serveHub(hub)).url
}

function delta(text: string, offset: number): LiveDelta {
  return { sessionKey: 'tenant~a b', runId: 'r1', turn: 1, attempt: 'a1', kind: 'text', offset, text }
}

/** Reads NDJSON messages from a response until `count` arrived. */
async function readMessages(response: Response, count: number): Promise<LiveMessage[]> {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  const messages: LiveMessage[] = []
  while (messages.length < count) {
    const { value, done } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
    const lines = text.split('\n')
    text = lines.pop() ?? ''
    for (const line of lines) if (line.trim() !== '') messages.push(JSON.parse(line) as LiveMessage)
  }
  await reader.cancel()
  return messages
}

describe('live server', () => {
  it('streams the buffered deltas of a session key, then live ones, as NDJSON', async () => {
    const hub = createLiveHub()
    hub.publish(delta('Hel', 0))
    const url = await listen(hub)
    const response = await fetch(`${url}${liveStreamPath('tenant~a b')}`, { headers: { authorization: `Bearer ${token}` } })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('application/x-ndjson')
    setTimeout(() => hub.publish(delta('lo', 3)), 20)
    const messages = await readMessages(response, 2)
    expect(messages.map(message => message.delta.text)).toEqual(['Hel', 'lo'])
  })

  it('refuses a request without the internal token', async () => {
    const url = await listen(createLiveHub())
    const missing = await fetch(`${url}${liveStreamPath('t~s')}`)
    const wrong = await fetch(`${url}${liveStreamPath('t~s')}`, { headers: { authorization: 'Bearer internal-token-9876543210' } })
    expect([missing.status, wrong.status]).toEqual([401, 401])
    expect(await missing.json()).toEqual({ error: { code: 'live_unauthorized', message: 'the live stream needs the internal token' } })
  })

  it('answers 404 to any other path', async () => {
    const url = await listen(createLiveHub())
    const response = await fetch(`${url}/v1/other`, { headers: { authorization: `Bearer ${token}` } })
    expect(response.status).toBe(404)
  })

  it('stops sending to a viewer that left', async () => {
    const hub = createLiveHub()
    const url = await listen(hub)
    const response = await fetch(`${url}${liveStreamPath('t~s')}`, { headers: { authorization: `Bearer ${token}` } })
    await response.body?.cancel()
    await new Promise(resolve => setTimeout(resolve, 50))
    expect(hub.size()).toBe(0)
  })
})

import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setTimeout as sleep } from 'node:timers/promises'
import type { SessionEvent } from '../../contract/session'
import type { ReadEventsRequest, WatchRequest } from '../../contract/event-log'
import { sessionKey, tenantOf } from '../../ingress-gateway/tenancy'
import { startFakeRestate, type FakeRestate } from './helpers/fake-restate'
import { bearer, KEY_A, KEY_B, testGateway } from './helpers/gateway'

const KEY_S1 = sessionKey(tenantOf(KEY_A), 's1')
const EVENTS_PATH = `/events/${encodeURIComponent(KEY_S1)}`

function event(seq: number): SessionEvent {
  return { seq, type: seq === 1 ? 'run:start' : 'turn:end', at: 1000 + seq, data: { n: seq } }
}

/** Reads SSE frames from a live response until `count` event frames arrived, then disconnects. */
async function readEvents(url: string, headers: Record<string, string>, count: number): Promise<{ status: number; contentType: string | null; frames: string[] }> {
  const controller = new AbortController()
  const response = await fetch(url, { headers, signal: controller.signal })
  const frames: string[] = []
  if (response.body === null) throw new Error('no body')
  const decoder = new TextDecoder()
  let buffered = ''
  const reader = response.body.getReader()
  while (frames.filter((frame) => frame.startsWith('id:')).length < count) {
    const { value, done } = await reader.read()
    if (done) break
    buffered += decoder.decode(value, { stream: true })
    const parts = buffered.split('\n\n')
    buffered = parts.pop() ?? ''
    frames.push(...parts)
  }
  controller.abort()
  return { status: response.status, contentType: response.headers.get('content-type'), frames }
}

describe('GET /v1/sessions/:sessionId/events', () => {
  let restate: FakeRestate
  let app: FastifyInstance
  let base: string
  const log: SessionEvent[] = [event(1), event(2), event(3)]
  /** The logs of sessions that do not exist when a test starts, by session key. */
  const laterLogs = new Map<string, SessionEvent[]>()
  const serveLaterLog = (key: string): void => {
    restate.on(`POST /events/${encodeURIComponent(key)}/read`, (request) => {
      const { after = 0, limit = 100 } = request.body as ReadEventsRequest
      const entries = laterLogs.get(key) ?? []
      return { status: 200, body: { events: entries.filter((entry) => entry.seq > after).slice(0, limit), count: entries.length } }
    })
  }

  beforeAll(async () => {
    restate = await startFakeRestate()
    restate.on(`POST ${EVENTS_PATH}/read`, (request) => {
      const { after = 0, limit = 100 } = request.body as ReadEventsRequest
      return { status: 200, body: { events: log.filter((entry) => entry.seq > after).slice(0, limit), count: log.length } }
    })
    // The parked watch: answers once the log passes `after` (checked every 10 ms here), or at its timeout.
    restate.on('POST /event_watch/wait', async (request) => {
      const { key, after, timeoutMs } = request.body as WatchRequest
      const entries = (): SessionEvent[] => (key === KEY_S1 ? log : (laterLogs.get(key) ?? []))
      for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(10)) {
        if (entries().length > after) return { status: 200, body: { count: entries().length } }
      }
      return { status: 200, body: { count: null } }
    })
    app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: restate.url })
    base = await app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    await app.close()
    await restate.close()
  })

  it('streams the log as SSE frames, then new events as they are appended', async () => {
    setTimeout(() => log.push(event(4)), 100)
    const { status, contentType, frames } = await readEvents(`${base}/v1/sessions/s1/events`, bearer(KEY_A), 4)
    expect(status).toBe(200)
    expect(contentType).toBe('text/event-stream; charset=utf-8')
    expect(frames[0]).toBe('retry: 2000')
    const events = frames.filter((frame) => frame.startsWith('id:'))
    expect(events[0]).toBe(`id: 1\nevent: run:start\ndata: ${JSON.stringify(event(1))}`)
    expect(events.map((frame) => frame.split('\n')[0])).toEqual(['id: 1', 'id: 2', 'id: 3', 'id: 4'])
  })

  it('resumes after Last-Event-ID, which wins over ?after=', async () => {
    const { frames } = await readEvents(`${base}/v1/sessions/s1/events?after=0`, { ...bearer(KEY_A), 'last-event-id': '2' }, 2)
    expect(frames.filter((frame) => frame.startsWith('id:')).map((frame) => frame.split('\n')[0])).toEqual(['id: 3', 'id: 4'])
    const afterRequests = restate.requests.filter((request) => request.path.endsWith('/read')).map((request) => (request.body as ReadEventsRequest).after)
    expect(afterRequests).toContain(2)
  })

  it('resumes after ?after=', async () => {
    const { frames } = await readEvents(`${base}/v1/sessions/s1/events?after=3`, bearer(KEY_A), 1)
    expect(frames.filter((frame) => frame.startsWith('id:')).map((frame) => frame.split('\n')[0])).toEqual(['id: 4'])
  })

  it('opens the stream of a session that does not exist yet and sends its first event when it comes; another key sees none', async () => {
    const ownKey = sessionKey(tenantOf(KEY_A), 'later')
    const otherKey = sessionKey(tenantOf(KEY_B), 'later')
    serveLaterLog(ownKey)
    serveLaterLog(otherKey)
    const own = readEvents(`${base}/v1/sessions/later/events`, bearer(KEY_A), 1)
    const other = readEvents(`${base}/v1/sessions/later/events`, bearer(KEY_B), 1)
    await sleep(300)
    laterLogs.set(ownKey, [event(1)])
    const { status, frames } = await own
    expect(status).toBe(200)
    expect(frames.filter((frame) => frame.startsWith('id:'))).toEqual([`id: 1\nevent: run:start\ndata: ${JSON.stringify(event(1))}`])
    // The other key's stream of the same id reads and watches its own session key only, which has no event.
    const watchedKeys = restate.requests.filter((request) => request.path === '/event_watch/wait').map((request) => (request.body as WatchRequest).key)
    expect(watchedKeys).toContain(otherKey)
    expect(restate.requests.some((request) => request.path.startsWith(`/session/`) && request.path.includes('later'))).toBe(false)
    laterLogs.set(otherKey, [event(1)])
    expect((await other).frames.filter((frame) => frame.startsWith('id:'))).toHaveLength(1)
  })

  it('keeps the stream open through a Restate outage that starts after it opened, and says so once', async () => {
    let calls = 0
    restate.on(`POST /events/${encodeURIComponent(sessionKey(tenantOf(KEY_A), 'flaky'))}/read`, () => (++calls === 2 || calls === 3 ? { status: 503, body: { message: 'starting' } } : { status: 200, body: { events: [event(1)], count: 1 } }))
    const { frames } = await readEvents(`${base}/v1/sessions/flaky/events`, bearer(KEY_A), 1)
    const errors = frames.filter((frame) => frame.startsWith('event: gateway:error'))
    expect(errors).toEqual([`event: gateway:error\ndata: ${JSON.stringify({ code: 'restate_unavailable', message: 'Restate is unavailable: starting' })}`])
    expect(frames.at(-1)).toMatch(/^id: 1\n/)
  })

  it('costs no read while the session is idle: viewers wait on one shared watch', async () => {
    const viewers = [1, 2, 3].map(() => readEvents(`${base}/v1/sessions/s1/events?after=${log.length}`, bearer(KEY_A), 1))
    const calls = (): number => restate.requests.filter((request) => request.path.startsWith(EVENTS_PATH) || request.path === '/event_watch/wait').length
    // The viewers' first reads, and the shared watch parked: wait until nothing more is asked.
    let settled = -1
    while (settled !== calls()) {
      settled = calls()
      await sleep(300)
    }
    await sleep(700)
    expect(calls()).toBe(settled)
    log.push(event(log.length + 1))
    const frames = await Promise.all(viewers)
    for (const viewer of frames) expect(viewer.frames.filter((frame) => frame.startsWith('id:'))).toHaveLength(1)
  })

  it('answers HEAD at once with the stream headers', async () => {
    const response = await fetch(`${base}/v1/sessions/s1/events`, { method: 'HEAD', headers: bearer(KEY_A), signal: AbortSignal.timeout(5_000) })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
  })

  it('closing the app ends open streams', async () => {
    const response = await fetch(`${base}/v1/sessions/s1/events`, { headers: bearer(KEY_A) })
    expect(response.status).toBe(200)
    const text = response.text()
    const closed = app.close()
    await expect(text).resolves.toContain('id: 1')
    // The stream ended by itself; what may remain is a spare socket the test client opened and never used.
    app.server.closeAllConnections()
    await closed
  })
})

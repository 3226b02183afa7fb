import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionEvent } from '../../contract/session'
import type { ReadEventsRequest } from '../../contract/event-log'
import { createLiveHub } from '../../services/live/live-hub'
import type { LiveDelta } from '../../contract/live-delta'
import { createLiveServer } from '../../services/live/live-server'
import { sessionKey, tenantOf } from '../../ingress-gateway/tenancy'
import { openSseViewer } from '../../support/sse-client'
import type { SseViewer } from '../../support/sse-client'
import { startFakeRestate, type FakeRestate } from './helpers/fake-restate'
import { bearer, KEY_A, testGateway } from './helpers/gateway'

const KEY_S1 = sessionKey(tenantOf(KEY_A), 's1')
const token = 'live-token-0123456789'

function delta(offset: number, text: string, attempt = 'a1'): LiveDelta {
  return { sessionKey: KEY_S1, runId: 'r1', turn: 1, attempt, kind: 'text', offset, text }
}

describe('live deltas on GET /v1/sessions/:sessionId/events', () => {
  let restate: FakeRestate
  let app: FastifyInstance
  let hubServer: Server
  let base = ''
  const hub = createLiveHub()
  const log: SessionEvent[] = [{ seq: 1, type: 'run:start', at: 1, data: { runId: 'r1' } }, { seq: 2, type: 'tool:end', at: 2, data: { runId: 'r1' } }]
  const viewers: SseViewer[] = []

  beforeAll(async () => {
    restate = await startFakeRestate()
    restate.on(`POST /session/${encodeURIComponent(KEY_S1)}/invocation`, { status: 200, body: { invocationId: 'inv_1', status: 'running', startedAt: 1 } })
    restate.on(`POST /events/${encodeURIComponent(KEY_S1)}/read`, (request) => {
      const { after = 0, limit = 100 } = request.body as ReadEventsRequest
      return { status: 200, body: { events: log.filter((entry) => entry.seq > after).slice(0, limit), count: log.length } }
    })
    restate.on('POST /event_watch/wait', { status: 200, body: { count: null } })
    hubServer = createLiveServer(hub, { token })
    await new Promise<void>((resolve) => hubServer.listen(0, '127.0.0.1', resolve))
    const live = { urls: [`http://127.0.0.1:${(hubServer.address() as AddressInfo).port}`], token }
    app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: restate.url, live })
    base = await app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    for (const viewer of viewers) viewer.close()
    await app.close()
    hubServer.closeAllConnections()
    await new Promise((resolve) => hubServer.close(resolve))
    await restate.close()
  })

  const view = async (headers: Record<string, string> = {}): Promise<SseViewer> => {
    const viewer = await openSseViewer(`${base}/v1/sessions/s1/events`, { ...bearer(KEY_A), ...headers })
    viewers.push(viewer)
    return viewer
  }

  it('sends the durable events first, then the attempt in progress from its start, then live deltas without an id', async () => {
    hub.publish(delta(0, 'Hel'))
    const viewer = await view({ 'last-event-id': '1' })
    await viewer.waitFor((frame) => frame.event === 'model:delta', 5_000)
    hub.publish(delta(3, 'lo'))
    await viewer.waitFor((frame) => frame.event === 'model:delta' && (frame.data.data as { offset: number }).offset === 3, 5_000)
    expect(viewer.frames.map((frame) => [frame.event, frame.id])).toEqual([['tool:end', '2'], ['model:delta', undefined], ['model:delta', undefined]])
    expect(viewer.frames[1]?.data).toEqual({ type: 'model:delta', data: { runId: 'r1', turn: 1, attempt: 'a1', kind: 'text', offset: 0, text: 'Hel' } })
  })

  it('announces a new attempt of the step as superseding the one the viewer saw', async () => {
    const viewer = await view({ 'last-event-id': '2' })
    await viewer.waitFor((frame) => frame.event === 'model:delta', 5_000)
    hub.publish(delta(0, 'Hello', 'a2'))
    const superseded = await viewer.waitFor((frame) => frame.event === 'model:superseded', 5_000)
    expect(superseded.data).toEqual({ type: 'model:superseded', data: { runId: 'r1', turn: 1, attempt: 'a1', nextAttempt: 'a2' } })
    const next = await viewer.waitFor((frame) => frame.event === 'model:delta' && (frame.data.data as { attempt: string }).attempt === 'a2', 5_000)
    expect(viewer.frames.indexOf(next)).toBeGreaterThan(viewer.frames.indexOf(superseded))
  })
})

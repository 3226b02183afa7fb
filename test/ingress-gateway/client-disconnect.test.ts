import type { FastifyInstance } from 'fastify'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { sessionKey, tenantOf } from '../../ingress-gateway/tenancy'
import { startFakeRestate, type FakeRestate } from './helpers/fake-restate'
import { bearer, KEY_A, testGateway } from './helpers/gateway'


/** A gate a fake route waits on: `arrived` resolves when the request reached it, `open()` lets it answer. */
function gate(): { arrived: Promise<void>; reached: () => void; opened: Promise<void>; open: () => void } {
  let reached!: () => void
  let open!: () => void
  const arrived = new Promise<void>((resolve) => { reached = resolve })
  const opened = new Promise<void>((resolve) => { open = resolve })
  return { arrived, reached, opened, open }
}

/** Starts a request, waits until the gateway's call to Restate is held at `held`, then disconnects the client. */
async function leaveWhileHeld(url: string, init: RequestInit, held: { arrived: Promise<void> }): Promise<void> {
  const client = new AbortController()
  const pending = fetch(url, { ...init, signal: client.signal }).catch(() => undefined)
  await held.arrived
  client.abort()
  await pending
  // Let the gateway's socket see the disconnection before Restate answers.
  await sleep(100)
}

describe('a client that disconnects while the gateway awaits Restate', () => {
  let restate: FakeRestate
  let app: FastifyInstance
  let base: string
  beforeAll(async () => {
    restate = await startFakeRestate()
    app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: `${restate.url}/admin`, limits: { maxEventStreams: 1 } })
    base = await app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    await app.close()
    await restate.close()
  })

  it('GET …/events: frees the stream slot and never starts the stream', async () => {
    const held = gate()
    restate.on(`POST /events/${encodeURIComponent(sessionKey(tenantOf(KEY_A), 'slow'))}/read`, async () => {
      held.reached()
      await held.opened
      return { status: 200, body: { events: [], count: 0 } }
    })
    await leaveWhileHeld(`${base}/v1/sessions/slow/events`, { headers: bearer(KEY_A) }, held)
    restate.requests.length = 0
    held.open()
    await sleep(300)
    expect(restate.requests.filter((request) => request.path.startsWith('/events/') || request.path === '/event_watch/wait')).toEqual([])
    restate.on(`POST /events/${encodeURIComponent(sessionKey(tenantOf(KEY_A), 'fast'))}/read`, { status: 200, body: { events: [], count: 0 } })
    const next = new AbortController()
    const response = await fetch(`${base}/v1/sessions/fast/events`, { headers: bearer(KEY_A), signal: next.signal })
    next.abort()
    expect(response.status).toBe(200)
  })

  it('POST …/prompts?wait=true: does not attach to the run once the client left during its admission', async () => {
    const held = gate()
    restate.on(`POST /admission/${tenantOf(KEY_A)}/admit`, async () => {
      held.reached()
      await held.opened
      return { status: 200, body: { outcome: 'admitted', invocationId: 'inv_wait', queued: false } }
    })
    // A run that never ends: an attach would stay open.
    restate.on('GET /restate/invocation/inv_wait/attach', async () => new Promise(() => undefined))
    const init = { method: 'POST', headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi' }) }
    await leaveWhileHeld(`${base}/v1/sessions/s1/prompts?wait=true`, init, held)
    held.open()
    await vi.waitFor(() => expect(restate.requests.some((request) => request.path.endsWith('/admit'))).toBe(true))
    await sleep(300)
    expect(restate.requests.filter((request) => request.path.endsWith('/attach'))).toEqual([])
  })
})

import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { sessionKey, tenantOf } from '../../ingress-gateway/tenancy'
import { startFakeRestate, type FakeRestate, type RecordedRequest } from './helpers/fake-restate'
import { bearer, KEY_A, KEY_B, testGateway } from './helpers/gateway'

const keyOf = (key: string, sessionId: string): string => encodeURIComponent(sessionKey(tenantOf(key), sessionId))
const user = (text: string) => ({ id: 'u1', role: 'user', parts: [{ type: 'text', text }] })
const approvalMessage = (id: string) => ({ id: 'a1', role: 'assistant', parts: [{ type: 'dynamic-tool', toolName: 'shell', toolCallId: 'c1', state: 'approval-responded', input: {}, approval: { id, approved: true } }] })

/** The stand-in's event log of each session: `ran` a run that is still running, `done` one that ended. */
function eventLog(request: RecordedRequest): { status: number; body: unknown } {
  const running = [{ seq: 1, type: 'run:start', at: 1, data: { runId: 'run_1', prompt: 'hi' } }]
  const events = request.path.includes(keyOf(KEY_A, 'done')) ? [...running, { seq: 2, type: 'run:end', at: 2, data: { runId: 'run_1', status: 'completed', text: '' } }] : running
  const { after = 0, limit = 100 } = (request.body ?? {}) as { after?: number; limit?: number }
  return { status: 200, body: { events: events.filter(event => event.seq > after).slice(0, limit), count: events.length } }
}

/** The stand-in's current invocation of each session: `done`'s completed, none for a session the key never ran. */
function invocationOf(request: RecordedRequest): { status: number; body: unknown } {
  if (request.path.includes(keyOf(KEY_B, 'ran')) || request.path.includes(keyOf(KEY_B, 'admitted'))) return { status: 200, body: null }
  const status = request.path.includes(keyOf(KEY_A, 'done')) ? 'completed' : 'running'
  return { status: 200, body: { invocationId: 'inv_1', status, startedAt: 1 } }
}

describe('the chat routes against a stand-in Restate', () => {
  let restate: FakeRestate
  let app: FastifyInstance
  let base: string
  beforeAll(async () => {
    restate = await startFakeRestate()
    restate.otherwise(request => {
      if (request.path.startsWith('/events/') && request.path.endsWith('/read')) return ['ran', 'starting', 'admitted'].some(id => request.path.includes(keyOf(KEY_B, id))) ? { status: 200, body: { events: [], count: 0 } } : eventLog(request)
      if (request.path === '/event_watch/wait') return new Promise(() => undefined)
      if (request.path.endsWith('/invocation')) return invocationOf(request)
      if (request.path.endsWith('/admittedPrompts')) return { status: 200, body: request.body === sessionKey(tenantOf(KEY_B), 'admitted') ? ['inv_9'] : [] }
      if (request.path.endsWith('/get')) return { status: 200, body: { exists: true, pending: [{ id: 'sign_q', kind: 'ask_user', question: 'q', createdAt: 1 }, { id: 'sign_ap', kind: 'approval', question: 'run shell?', callId: 'c1', createdAt: 1 }] } }
      if (request.path.startsWith('/resumer/sign_ap/')) return { status: 200, body: { outcome: 'answered' } }
      return { status: 404, body: { message: 'no route' } }
    })
    app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: restate.url, limits: { maxEventStreams: 1 } })
    base = await app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    await app.close()
    await restate.close()
  })
  beforeEach(() => {
    restate.requests.length = 0
  })

  it('refuses a body without user text, with a field that is not allowed, or with a bad trigger (400), before calling Restate', async () => {
    for (const payload of [{ messages: [] }, { messages: [user('  ')] }, { messages: [{ role: 'assistant', parts: [{ type: 'text', text: 'x' }] }] }, { messages: [user('x')], extra: 1 }, { messages: [user('x')], trigger: 'resume' }, {}]) {
      const response = await app.inject({ method: 'POST', url: '/v1/sessions/ran/chat', payload, headers: bearer(KEY_A) })
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().error.code).toBe('invalid_request')
    }
    expect(restate.requests).toEqual([])
  })

  it('answers 409 approval_not_pending for an approval the session does not list (a question of another kind included)', async () => {
    for (const id of ['sign_unknown', 'sign_q']) {
      const response = await app.inject({ method: 'POST', url: '/v1/sessions/ran/chat', payload: { messages: [user('x'), approvalMessage(id)] }, headers: bearer(KEY_A) })
      expect(response.statusCode).toBe(409)
      expect(response.json().error.code).toBe('approval_not_pending')
    }
    expect(restate.requests.filter(request => request.path.startsWith('/resumer/'))).toEqual([])
  })

  it('answers an approval the message repeats once (a repeated part must not become one Restate call each)', async () => {
    const message = approvalMessage('sign_ap')
    const repeated = { ...message, parts: [message.parts[0], message.parts[0], message.parts[0]] }
    const client = new AbortController()
    const response = await fetch(`${base}/v1/sessions/ran/chat`, { method: 'POST', headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body: JSON.stringify({ messages: [user('x'), repeated] }), signal: client.signal })
    expect(response.status).toBe(200)
    client.abort()
    expect(restate.requests.filter(request => request.path.startsWith('/resumer/')).length).toBe(1)
    // The slot is freed once the gateway saw the client leave (the next tests stream again).
    for (let tries = 0; ; tries++) {
      const again = await fetch(`${base}/v1/sessions/ran/events`, { headers: bearer(KEY_A) })
      await again.body?.cancel()
      if (again.status === 200) break
      expect(tries).toBeLessThan(100)
      await new Promise(resolve => setTimeout(resolve, 20))
    }
  })

  it('GET …/chat/stream: 204 when the latest run ended, and for a session this key never ran (a new chat resumes on load too)', async () => {
    const missing = await app.inject({ method: 'GET', url: '/v1/sessions/ran/chat/stream', headers: bearer(KEY_B) })
    expect(missing.statusCode).toBe(204)
    const idle = await app.inject({ method: 'GET', url: '/v1/sessions/done/chat/stream', headers: bearer(KEY_A) })
    expect(idle.statusCode).toBe(204)
  })

  it('GET …/chat/stream: a run admitted or started before its start reached the log is streamed (a reload right after sending)', async () => {
    for (const sessionId of ['starting', 'admitted']) {
      const response = await app.inject({ method: 'HEAD', url: `/v1/sessions/${sessionId}/chat/stream`, headers: bearer(KEY_B) })
      expect(response.statusCode, sessionId).toBe(200)
      expect(response.headers['x-vercel-ai-ui-message-stream']).toBe('v1')
    }
  })

  it('GET …/chat/stream replays the running run as a UI message stream (header v1), and chat streams share the per-key cap with event streams', async () => {
    const chat = new AbortController()
    const open = await fetch(`${base}/v1/sessions/ran/chat/stream`, { headers: bearer(KEY_A), signal: chat.signal })
    expect(open.status).toBe(200)
    expect(open.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1')
    const reader = open.body?.getReader()
    const first = new TextDecoder().decode((await reader?.read())?.value)
    expect(first).toBe('data: {"type":"start","messageId":"run_1"}\n\n')
    const events = await fetch(`${base}/v1/sessions/ran/events`, { headers: bearer(KEY_A) })
    expect(events.status).toBe(429)
    expect(await events.json()).toMatchObject({ error: { code: 'too_many_streams' } })
    const another = await fetch(`${base}/v1/sessions/ran/chat`, { method: 'POST', headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body: JSON.stringify({ messages: [user('x')] }) })
    expect(another.status).toBe(429)
    chat.abort()
    // The slot is freed once the gateway saw the client leave.
    for (let tries = 0; ; tries++) {
      const again = await fetch(`${base}/v1/sessions/ran/events`, { headers: bearer(KEY_A) })
      await again.body?.cancel()
      if (again.status === 200) break
      expect(tries).toBeLessThan(100)
      await new Promise(resolve => setTimeout(resolve, 20))
    }
  })
})

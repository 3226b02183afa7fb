import { AgentCapabilitiesSchema, EventSchemas } from '@ag-ui/core/schemas'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { sessionKey, tenantOf } from '../../ingress-gateway/tenancy'
import { startFakeRestate, type FakeRestate, type RecordedRequest } from './helpers/fake-restate'
import { bearer, KEY_A, testGateway } from './helpers/gateway'

const keyOf = (key: string, sessionId: string): string => encodeURIComponent(sessionKey(tenantOf(key), sessionId))
const user = (content: string) => ({ id: 'u1', role: 'user', content })
const input = (threadId: string, extra: Record<string, unknown> = {}) => ({ threadId, runId: 'client-run', messages: [user('hello')], tools: [], context: [], ...extra })

/** The stand-in's event log: session `ran` has a run in progress, `done` one that ended, others none. */
function eventLog(request: RecordedRequest): { status: number; body: unknown } {
  const running = [{ seq: 1, type: 'run:start', at: 1, data: { runId: 'run_1', prompt: 'hi' } }]
  const events = request.path.includes(keyOf(KEY_A, 'done')) ? [...running, { seq: 2, type: 'run:end', at: 2, data: { runId: 'run_1', status: 'completed', text: 'bye' } }] : request.path.includes(keyOf(KEY_A, 'ran')) ? running : []
  const { after = 0, limit = 100 } = (request.body ?? {}) as { after?: number; limit?: number }
  return { status: 200, body: { events: events.filter(event => event.seq > after).slice(0, limit), count: events.length } }
}

const VIEW = {
  exists: true, id: 'x', status: 'running', counts: { turns: 1, runs: 1 }, runs: [], page: { from: 0, to: 1, total: 1, limit: 200, nextTurnsAfter: null, previousTurnsAfter: null },
  usage: { usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0, modelRequests: 0, toolCalls: 0, turns: 0 },
  turns: [{ id: 'run_1-t0-u', runId: 'run_1', role: 'user', content: [{ type: 'text', text: 'hi' }], createdAt: 1 }],
  pending: [{ id: 'sign_approval', kind: 'approval', question: 'Run it?', callId: 'c1', tool: 'shell', createdAt: 1 }],
}

/** Reads the SSE frames of `response` until `count` arrived, then stops reading. */
async function frames(response: Response, count: number): Promise<Array<Record<string, unknown>>> {
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  while (text.split('\n\n').length <= count) {
    const { value, done } = await reader.read()
    if (done) break
    text += decoder.decode(value, { stream: true })
  }
  await reader.cancel()
  return text.split('\n\n').filter(frame => frame.startsWith('data: ')).map(frame => JSON.parse(frame.slice(6)) as Record<string, unknown>)
}

describe('the AG-UI routes against a stand-in Restate', () => {
  let restate: FakeRestate
  let app: FastifyInstance
  let base: string
  const post = (body: unknown, signal?: AbortSignal): Promise<Response> => fetch(`${base}/v1/ag-ui`, { method: 'POST', headers: { ...bearer(KEY_A), 'content-type': 'application/json' }, body: JSON.stringify(body), ...(signal === undefined ? {} : { signal }) })

  beforeAll(async () => {
    restate = await startFakeRestate()
    restate.otherwise(request => {
      if (request.path.startsWith('/events/') && request.path.endsWith('/read')) return eventLog(request)
      if (request.path === '/event_watch/wait') return new Promise(() => undefined)
      if (request.path.endsWith('/get')) return { status: 200, body: VIEW }
      if (request.path.endsWith('/steer')) return { status: 200, body: { outcome: 'saved', messageId: 'inv_msg' } }
      if (request.path.startsWith('/resumer/sign_answered/')) return { status: 200, body: { outcome: 'already_answered' } }
      if (request.path.startsWith('/resumer/sign_unknown/')) return { status: 200, body: { outcome: 'unknown' } }
      if (request.path.startsWith('/resumer/')) return { status: 200, body: { outcome: 'answered' } }
      return { status: 404, body: { message: 'no route' } }
    })
    app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: restate.url, limits: { maxEventStreams: 2 } })
    base = await app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    await app.close()
    await restate.close()
  })
  beforeEach(() => {
    restate.requests.length = 0
  })

  it('refuses inputs that are not a RunAgentInput (400, naming the field) before calling Restate', async () => {
    for (const payload of [{}, input('no/slash'), { ...input('s1'), messages: 'x' }, input('s1', { resume: [{ interruptId: 'q', status: 'maybe' }] }), input('s1', { messages: [user('   ')] }), input('s1', { messages: [{ id: 'a', role: 'robot', content: 'x' }] })]) {
      const response = await app.inject({ method: 'POST', url: '/v1/ag-ui', payload, headers: bearer(KEY_A) })
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().error.code).toBe('invalid_request')
    }
    expect(restate.requests).toEqual([])
  })

  it('answers 409 run_active to a prompt while a run is in progress, and steers it with forwardedProps.mode "steer"', async () => {
    const busy = await app.inject({ method: 'POST', url: '/v1/ag-ui', payload: input('ran'), headers: bearer(KEY_A) })
    expect(busy.statusCode).toBe(409)
    expect(busy.json().error.code).toBe('run_active')
    const steered = await post(input('ran', { forwardedProps: { mode: 'steer' } }))
    expect(steered.status).toBe(200)
    expect(steered.headers.get('content-type')).toBe('text/event-stream')
    const [started, snapshot] = await frames(steered, 2)
    expect(started).toEqual({ type: 'RUN_STARTED', threadId: 'ran', runId: 'client-run', protocolVersion: '1.0' })
    expect(snapshot).toMatchObject({ type: 'MESSAGES_SNAPSHOT', messages: [{ id: 'run_1-t0-u', role: 'user', content: 'hi' }] })
    expect(EventSchemas.safeParse(snapshot).success).toBe(true)
    expect(restate.requests.find(request => request.path.endsWith('/steer'))?.body).toMatchObject({ sessionKey: sessionKey(tenantOf(KEY_A), 'ran'), text: 'hello' })
  })

  it('answers a resume once per interrupt (an approval as a decision), treats an answered one as a no-op, and 404s an unknown one', async () => {
    const resumed = await post(input('done', { resume: [{ interruptId: 'sign_approval', status: 'resolved', payload: { approved: false, reason: 'not now' } }, { interruptId: 'sign_answered', status: 'resolved', payload: 'x' }] }))
    expect(resumed.status).toBe(200)
    const events = await frames(resumed, 3)
    expect(events.map(event => event.type)).toEqual(['RUN_STARTED', 'MESSAGES_SNAPSHOT', 'RUN_FINISHED'])
    expect(events[2]).toMatchObject({ outcome: { type: 'success' }, result: 'bye' })
    const answers = restate.requests.filter(request => request.path.startsWith('/resumer/'))
    expect(answers.map(request => [request.path, request.body])).toEqual([
      ['/resumer/sign_approval/answer', { answer: { decision: 'deny', reason: 'not now' }, owner: sessionKey(tenantOf(KEY_A), '') }],
      ['/resumer/sign_answered/answer', { answer: 'x', owner: sessionKey(tenantOf(KEY_A), '') }],
    ])
    const unknown = await app.inject({ method: 'POST', url: '/v1/ag-ui', payload: input('done', { resume: [{ interruptId: 'sign_unknown', status: 'resolved' }] }), headers: bearer(KEY_A) })
    expect(unknown.statusCode).toBe(404)
    expect(unknown.json().error.code).toBe('question_not_found')
  })

  it('a reconnect (no new user message) of a session that never ran gets 404; streams count against the per-key cap', async () => {
    const missing = await app.inject({ method: 'POST', url: '/v1/ag-ui', payload: input('never', { messages: [] }), headers: bearer(KEY_A) })
    expect(missing.statusCode).toBe(404)
    expect(missing.json().error.code).toBe('session_not_found')
    const held = [new AbortController(), new AbortController()]
    const open = await Promise.all(held.map(controller => post(input('ran', { messages: [] }), controller.signal)))
    expect(open.map(response => response.status)).toEqual([200, 200])
    const third = await post(input('ran', { messages: [] }))
    expect(third.status).toBe(429)
    expect(await third.json()).toMatchObject({ error: { code: 'too_many_streams' } })
    for (const controller of held) controller.abort()
  })

  it('GET /v1/ag-ui/capabilities answers AgentCapabilities', async () => {
    const response = await app.inject({ method: 'GET', url: '/v1/ag-ui/capabilities', headers: bearer(KEY_A) })
    expect(response.statusCode).toBe(200)
    expect(AgentCapabilitiesSchema.safeParse(response.json()).success).toBe(true)
    expect((await app.inject({ method: 'GET', url: '/v1/ag-ui/capabilities' })).statusCode).toBe(401)
  })
})

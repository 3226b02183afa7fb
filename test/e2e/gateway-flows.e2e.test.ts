import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor as pollUntilDefined } from '../helpers/restate/restate-harness'
import { openSseViewer } from '../../support/sse-client'
import type { InjectOptions } from 'fastify'
import { buildGateway } from '../../ingress-gateway/app'
import { loadGatewayConfig } from '../../ingress-gateway/config'
import { startCountingProxy } from '../helpers/counting-proxy'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

interface Pending { id: string; kind: string; question: string; answerUrl: string }
interface View { id: string; status: string; turns: Array<{ role: string; runId: string }>; runs: Array<{ label?: string; startedAt: number; endedAt?: number; depth: number }>; usage: { modelRequests: number; usage: { inputTokens: number } }; pending: Pending[] }

async function json<T>(response: Response): Promise<T> {
  return (await response.json()) as T
}

/** Polls `probe` (every 50 ms) until it yields a value; the harness's poller with this file's timeout. */
function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  return pollUntilDefined(probe, timeoutMs, 'the e2e condition')
}

/**
 * Status of a prompt whose body is over the limit. The gateway answers 413 from the declared length and may close the
 * connection before the upload ends, so the client's write can fail (EPIPE) after the answer came: read the answer.
 */
function oversizedPromptStatus(stack: TestStack, sessionId: string, bytes: number): Promise<number> {
  const body = JSON.stringify({ prompt: 'x'.repeat(bytes) })
  return new Promise((resolve, reject) => {
    const request = http.request(`${stack.gatewayUrl}/v1/sessions/${sessionId}/prompts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.apiKeys[0]}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, response => { response.resume(); resolve(response.statusCode ?? 0) })
    request.on('error', error => { if ((error as NodeJS.ErrnoException).code !== 'EPIPE' && (error as NodeJS.ErrnoException).code !== 'ECONNRESET') reject(error) })
    request.end(body)
  })
}

describe('the stack over HTTP', () => {
  let stack: TestStack | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)
  beforeAll(async () => { stack = await startTestStack() }, 120_000)
  afterAll(async () => { await stack?.destroy() })

  const prompt = (sessionId: string, body: unknown, query = '', key?: string) => s().request(`/v1/sessions/${sessionId}/prompts${query}`, { method: 'POST', body: JSON.stringify(body), ...(key ? { key } : {}) })
  const view = async (sessionId: string, key?: string) => json<View>(await s().request(`/v1/sessions/${sessionId}`, key ? { key } : {}))
  /** The session once it exists (a run writes its state a moment after the 202), or undefined while it does not. */
  const viewWhenReady = async (sessionId: string): Promise<View | undefined> => {
    const response = await s().request(`/v1/sessions/${sessionId}`)
    return response.status === 404 ? undefined : json<View>(response)
  }

  it('1. runs a prompt to completion; GET shows the turns and the usage', async () => {
    const response = await prompt('e2e-basic', { prompt: 'hello world' }, '?wait=true')
    expect(response.status).toBe(200)
    const body = await json<{ status: string; text: string; invocationId: string }>(response)
    expect(body).toMatchObject({ status: 'completed', text: 'Echo: hello world' })
    const session = await view('e2e-basic')
    expect(session.id).toBe('e2e-basic')
    expect(session.turns.map(turn => turn.role)).toEqual(['user', 'assistant'])
    expect(session.usage.modelRequests).toBe(1)
    expect(session.usage.usage.inputTokens).toBeGreaterThan(0)
  })

  it('1b. starts a run once for a repeated Idempotency-Key', async () => {
    const send = () => s().request('/v1/sessions/e2e-idem/prompts?wait=true', { method: 'POST', body: JSON.stringify({ prompt: 'only once' }), headers: { 'idempotency-key': 'req-42' } })
    const first = await json<{ invocationId: string }>(await send())
    const second = await json<{ invocationId: string }>(await send())
    expect(second.invocationId).toBe(first.invocationId)
    expect((await view('e2e-idem')).runs).toHaveLength(1)
  })

  it('1c. a client polling a session until its run ends never reads a completed run as interrupted', async () => {
    const sessions = Array.from({ length: 12 }, (_, index) => `e2e-poll-${index}`)
    const seen = await Promise.all(sessions.map(async sessionId => {
      expect((await prompt(sessionId, { prompt: 'todo: a | b\ntodos:' })).status).toBe(202)
      const statuses: string[] = []
      for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
        const current = await viewWhenReady(sessionId) as (View & { invocation?: { status: string } }) | undefined
        if (!current) continue
        statuses.push(`${current.status}/${current.invocation?.status ?? '-'}`)
        if (current.invocation?.status !== undefined && current.invocation.status !== 'running') break
      }
      return statuses
    }))
    for (const statuses of seen) {
      expect(statuses.at(-1)).toBe('completed/completed')
      expect(statuses.filter(status => status.includes('interrupted') || status.includes('killed')), statuses.join(' ')).toEqual([])
    }
  })

  it('1d. calls to Restate per request, counted on the real stack: one per prompt, message and answer, none to the admin API', async () => {
    const [ingress, admin] = [await startCountingProxy(s().ingressUrl), await startCountingProxy(s().adminUrl)]
    const gateway = await buildGateway({ ...loadGatewayConfig({ GATEWAY_API_KEYS: s().apiKeys.join(',') }), restateIngressUrl: ingress.url, restateAdminUrl: admin.url })
    try {
      const counted = async (request: InjectOptions, status: number): Promise<string[]> => {
        ingress.requests.length = 0
        admin.requests.length = 0
        const response = await gateway.inject({ ...request, headers: { authorization: `Bearer ${s().apiKeys[0]}`, ...(request.headers ?? {}) } })
        expect(response.statusCode, response.body).toBe(status)
        return [...ingress.requests, ...admin.requests.map(made => `admin ${made}`)]
      }
      const prompt = await counted({ method: 'POST', url: '/v1/sessions/e2e-calls/prompts', payload: { prompt: 'ask: counted?' }, headers: { 'idempotency-key': 'calls-1' } }, 202)
      const pending = await waitFor(async () => (await viewWhenReady('e2e-calls'))?.pending[0])
      const steering = await counted({ method: 'POST', url: '/v1/sessions/e2e-calls/messages', payload: { text: 'and also' } }, 202)
      const answer = await counted({ method: 'POST', url: `/v1/awakeables/${encodeURIComponent(pending.id)}/resolve`, payload: { answer: 'yes' } }, 200)
      console.info(`gateway calls to Restate on the real stack: prompt ${JSON.stringify(prompt)}, steering ${JSON.stringify(steering)}, answer ${JSON.stringify(answer)}`)
      expect([prompt, steering, answer].map(calls => calls.length)).toEqual([1, 1, 1])
      expect([...prompt, ...steering, ...answer].filter(call => call.startsWith('admin'))).toEqual([])
    } finally {
      await gateway.close()
      await ingress.close()
      await admin.close()
    }
  })

  it('1e. a run that fails for good answers ?wait=true with 200, status failed and the error the session records', async () => {
    const response = await prompt('e2e-fail', { prompt: 'fail: on purpose' }, '?wait=true')
    expect(response.status).toBe(200)
    const body = await json<{ status: string; text: string; error: string; invocationId: string }>(response)
    expect(body).toMatchObject({ status: 'failed', text: '', error: 'demo failure: on purpose' })
    const session = await json<{ runs: Array<{ status: string; error?: string }> }>(await s().request('/v1/sessions/e2e-fail'))
    expect(session.runs.at(-1)).toMatchObject({ status: 'failed', error: body.error })
  })

  it('1f. a viewer that opens the event stream before the session exists sees its first run from run:start', async () => {
    const viewer = await openSseViewer(`${s().gatewayUrl}/v1/sessions/e2e-watch-first/events`, { authorization: `Bearer ${s().apiKeys[0]}` })
    try {
      expect(viewer.status).toBe(200)
      const other = await openSseViewer(`${s().gatewayUrl}/v1/sessions/e2e-watch-first/events`, { authorization: `Bearer ${s().apiKeys[1]}` })
      await new Promise(resolve => setTimeout(resolve, 300)) // both parked on an empty log
      expect((await prompt('e2e-watch-first', { prompt: 'hello first viewer' }, '?wait=true')).status).toBe(200)
      await viewer.waitFor(frame => frame.event === 'run:end', 30_000)
      expect(viewer.frames.filter(frame => frame.id !== undefined)[0]).toMatchObject({ event: 'run:start', id: '1' })
      // Another key's stream of the same id follows its own (empty) session: nothing of this one reaches it.
      expect(other.status).toBe(200)
      expect(other.frames.filter(frame => frame.id !== undefined)).toEqual([])
      other.close()
    } finally {
      viewer.close()
    }
  })

  it('2. asks a question; the signed answerUrl answers it and the run completes with the answer', async () => {
    const accepted = await prompt('e2e-ask', { prompt: 'ask: what is your name?' })
    expect(accepted.status).toBe(202)
    const { invocationId } = await json<{ invocationId: string }>(accepted)
    const pending = await waitFor(async () => (await viewWhenReady('e2e-ask'))?.pending[0])
    expect(pending).toMatchObject({ kind: 'ask_user', question: 'what is your name?' })
    const url = new URL(pending.answerUrl)
    const answered = await fetch(`${s().gatewayUrl}${url.pathname}${url.search}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ answer: 'Ada' }) })
    expect(answered.status).toBe(200)
    const again = await fetch(`${s().gatewayUrl}${url.pathname}${url.search}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ answer: 'Bob' }) })
    expect(again.status).toBe(409)
    const done = await waitFor(async () => { const session = await viewWhenReady('e2e-ask'); return session?.status === 'completed' ? session : undefined })
    expect(done.pending).toEqual([])
    const events = await s().request('/v1/sessions/e2e-ask/events', { headers: { 'last-event-id': '0' } })
    expect(events.headers.get('content-type')).toContain('text/event-stream')
    const reader = events.body?.getReader()
    let text = ''
    while (reader && !text.includes('run:end')) text += new TextDecoder().decode((await reader.read()).value)
    await reader?.cancel()
    expect(text).toContain('event: question')
    expect(invocationId).toMatch(/^inv_/)
  })

  it('3. spawns three children that overlap in time and merges them into the session', async () => {
    const response = await prompt('e2e-spawn', { prompt: 'spawn: alpha | beta | gamma' }, '?wait=true')
    expect((await json<{ text: string }>(response)).text).toBe('Children answered: Echo: alpha / Echo: beta / Echo: gamma')
    const session = await view('e2e-spawn')
    const children = session.runs.filter(run => run.label !== undefined)
    expect(children.map(run => run.label)).toEqual(['child-1', 'child-2', 'child-3'])
    expect(Math.max(...children.map(run => run.startedAt))).toBeLessThan(Math.min(...children.map(run => run.endedAt ?? 0)))
  })

  it('4. cancels a long shell call through the Admin API; the session says cancelled and its viewers get run:end', async () => {
    await prompt('e2e-cancel', { prompt: 'shell: sleep 30' })
    await waitFor(async () => (((await viewWhenReady('e2e-cancel'))?.turns.length ?? 0) >= 2 ? true : undefined))
    const viewer = await openSseViewer(`${s().gatewayUrl}/v1/sessions/e2e-cancel/events`, { authorization: `Bearer ${s().apiKeys[0]}` })
    try {
      const cancelled = await s().request('/v1/sessions/e2e-cancel/cancel', { method: 'POST' })
      expect(cancelled.status).toBe(202)
      const session = await waitFor(async () => { const current = await viewWhenReady('e2e-cancel'); return current?.status === 'cancelled' ? current : undefined })
      expect(session.status).toBe('cancelled')
      const end = await viewer.waitFor(frame => frame.event === 'run:end', 30_000)
      expect(end.data).toMatchObject({ type: 'run:end', data: { status: 'cancelled' } })
      expect((await s().request('/v1/sessions/e2e-cancel/cancel', { method: 'POST' })).status).toBe(409)
    } finally {
      viewer.close()
    }
  })

  it('4b. cancelling a run cancels its sub-agents too', async () => {
    const childInvocations = async (): Promise<Array<{ status: string; completion_failure?: string }>> => {
      const response = await fetch(`${s().adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query: "SELECT status, completion_failure FROM sys_invocation WHERE target_service_name = 'child'" }) })
      return ((await response.json()) as { rows: Array<{ status: string; completion_failure?: string }> }).rows
    }
    await prompt('e2e-cancel-tree', { prompt: 'spawn: shell: sleep 30 | shell: sleep 30' })
    await waitFor(async () => ((await childInvocations()).filter(row => row.status !== 'completed').length >= 2 ? true : undefined))
    expect((await s().request('/v1/sessions/e2e-cancel-tree/cancel', { method: 'POST' })).status).toBe(202)
    const children = await waitFor(async () => {
      const rows = await childInvocations()
      return rows.length >= 2 && rows.every(row => row.status === 'completed') ? rows : undefined
    })
    expect(children.filter(row => (row.completion_failure ?? '').includes('Cancelled'))).toHaveLength(2)
    await waitFor(async () => ((await viewWhenReady('e2e-cancel-tree'))?.status === 'cancelled' ? true : undefined))
  })

  it('6. answers bad input with the documented 4xx and changes nothing', async () => {
    const cases: Array<[Promise<Response>, number]> = [
      [prompt('e2e-bad', {}), 400],
      [prompt('e2e-bad', { prompt: 42 }), 400],
      [prompt('e2e-bad', { prompt: 'x', maxTurns: 'many' }), 400],
      [prompt('e2e-bad', { prompt: 'x', extra: true }), 400],
      [prompt('bad id!', { prompt: 'x' }), 400],
      [s().request('/v1/sessions/never-created'), 404],
      [s().request('/v1/awakeables/sign_unknown/resolve', { method: 'POST', body: JSON.stringify({ answer: 1 }) }), 404],
      [s().request('/v1/awakeables/sign_unknown/resolve?token=bad', { method: 'POST', body: JSON.stringify({ answer: 1 }), key: null }), 403],
      [s().request('/v1/sessions/e2e-basic', { key: 'wrong-key' }), 401],
      [s().request('/v1/sessions/e2e-basic', { key: null }), 401],
    ]
    for (const [response, status] of cases) expect((await response).status).toBe(status)
    expect(await oversizedPromptStatus(s(), 'e2e-bad', 2_000_000)).toBe(413)
    expect((await s().request('/v1/sessions/e2e-bad')).status).toBe(404)
    expect((await fetch(`${s().gatewayUrl}/healthz`)).status).toBe(200)
  })

  it('7. another key cannot read, prompt into, answer or cancel the session', async () => {
    const other = s().apiKeys[1]
    expect((await s().request('/v1/sessions/e2e-basic', { key: other })).status).toBe(404)
    expect((await s().request('/v1/sessions/e2e-basic/cancel', { method: 'POST', key: other })).status).toBe(404)
    const mine = await view('e2e-basic')
    await prompt('e2e-basic', { prompt: 'from tenant b' }, '?wait=true', other)
    expect((await view('e2e-basic')).turns).toHaveLength(mine.turns.length)
    await prompt('e2e-ask2', { prompt: 'ask: secret?' })
    const pending = await waitFor(async () => (await viewWhenReady('e2e-ask2'))?.pending[0])
    const foreign = await s().request(`/v1/awakeables/${encodeURIComponent(pending.id)}/resolve`, { method: 'POST', body: JSON.stringify({ answer: 'x' }), key: other })
    expect(foreign.status).toBe(404)
    const own = await s().request(`/v1/awakeables/${encodeURIComponent(pending.id)}/resolve`, { method: 'POST', body: JSON.stringify({ answer: 'mine' }) })
    expect(own.status).toBe(200)
  })
})

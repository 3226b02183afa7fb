import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { start } from '../../support/anthropic-server'
import type { FakeAnthropicServer, RecordedRequest } from '../../support/anthropic-server'
import { demoAnswer } from '../../support/demo-wire-model'
import { waitFor } from '../helpers/restate/restate-harness'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

/*
 * Humans in the loop over HTTP on the real stack (Restate server, services, gateway, a local Anthropic-wire model
 * server answering as the demo model): tool approvals answered through the gateway, and messages steered into a
 * running session. Each describe starts one stack: normally (with SIGKILLs of the services), and in the always-replay
 * mode (inactivity timeout 0: every await suspends, every resume replays the journal).
 */

/** Steering texts carry this mark; the model server leaves them out when it plays the demo model, so the run's plan does not change. */
const STEER = 'STEER'
/** What the demo model answers after an `echo … >> file` call ran. */
const SHELL_DONE = 'Done: Exit code: 0\n(no output)'

interface WireBlock { type: string; text?: string; content?: unknown; is_error?: boolean }
interface WireMessage { role: string; content: string | WireBlock[] }
interface Pending { id: string; kind: string; question: string; tool?: string; input?: string; answerUrl: string }
interface View {
  status: string
  runs: Array<{ id: string; prompt: string; status: string; text?: string }>
  turns: Array<{ id: string; role: string; content: Array<{ type: string; text?: string; content?: unknown; isError?: boolean }> }>
  pending: Pending[]
  invocation?: { status: string }
}

function messagesOf(request: RecordedRequest): WireMessage[] {
  return (request.body?.messages ?? []) as unknown as WireMessage[]
}

function textsOf(message: WireMessage | undefined): string[] {
  if (!message) return []
  return typeof message.content === 'string' ? [message.content] : message.content.flatMap(block => (block.type === 'text' ? [block.text ?? ''] : []))
}

/** The demo model, blind to steering texts (the test reads them from the request log instead). */
async function demoIgnoringSteering(request: RecordedRequest): ReturnType<typeof demoAnswer> {
  const messages = messagesOf(request).map(message => (typeof message.content === 'string' ? message : { ...message, content: message.content.filter(block => !(block.type === 'text' && block.text?.startsWith(STEER))) }))
  return demoAnswer({ ...request, body: { ...request.body, messages } as unknown as RecordedRequest['body'] })
}

function humansInTheLoop(mode: 'normal' | 'always replay', env: Record<string, string>): void {
  let stack: TestStack | undefined
  let model: FakeAnthropicServer | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  const ledger = (): string => join(s().sharedDir, 'side-effects.log')
  const tag = mode === 'normal' ? 'n' : 'r'

  beforeAll(async () => {
    model = await start({ apiKey: 'sk-ant-hitl' })
    model.setHandler(demoIgnoringSteering)
    // The shell's side effects go to a ledger in the data folder, which a sandboxed command cannot reach: one tenant, no sandbox.
    stack = await startTestStack({ ANTHROPIC_API_KEY: 'sk-ant-hitl', ANTHROPIC_BASE_URL: model.url, ZIDANE_MODEL: 'claude-hitl', ZIDANE_SANDBOX: 'off', ...env }, { tenants: 1 })
  }, 240_000)
  afterAll(async () => {
    await stack?.destroy()
    await model?.close()
  })
  printStackOutputOnFailure(() => stack)

  const post = async (path: string, body: unknown): Promise<Response> => s().request(path, { method: 'POST', body: JSON.stringify(body) })
  const view = async (sessionId: string): Promise<View | undefined> => {
    const response = await s().request(`/v1/sessions/${sessionId}`)
    return response.status === 200 ? ((await response.json()) as View) : undefined
  }
  const ended = (sessionId: string, runs = 1): Promise<View> => waitFor(async () => {
    const current = await view(sessionId)
    return current && current.runs.length >= runs && current.runs.every(run => run.status !== 'running') && current.invocation?.status !== 'running' ? current : undefined
  }, 90_000, `the runs of ${sessionId}`)
  const pendingOf = (sessionId: string): Promise<Pending> => waitFor(async () => (await view(sessionId))?.pending[0], 60_000, `a pending approval of ${sessionId}`)
  const answerByLink = async (pending: Pending, body: unknown): Promise<Response> => {
    const url = new URL(pending.answerUrl)
    return fetch(`${s().gatewayUrl}${url.pathname}${url.search}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
  }
  const ledgerLines = (line: string): number => (existsSync(ledger()) ? readFileSync(ledger(), 'utf8').split('\n').filter(entry => entry === line).length : 0)
  const requestsOf = (prompt: string): RecordedRequest[] => (model?.requests ?? []).filter(request => textsOf(messagesOf(request)[0]).join('') === prompt)
  const shellPrompt = (line: string): string => `shell: echo ${line} >> ${ledger()}`
  /** Waits until the inbox's `add` of message `id` (its invocation) has run. */
  const savedInInbox = (id: string): Promise<true> => waitFor(async () => {
    const response = await fetch(`${s().adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query: `SELECT status FROM sys_invocation WHERE id = '${id}'` }) })
    const status = ((await response.json()) as { rows: Array<{ status: string }> }).rows[0]?.status
    return (status === undefined || status === 'completed') || undefined
  }, 30_000, `message ${id} saved in the inbox`)

  it('a shell call under an "approve" policy waits in pending with its tool and input, and runs once after approve', async () => {
    const sessionId = `approve-${tag}`
    expect((await post(`/v1/sessions/${sessionId}/prompts`, { prompt: shellPrompt(sessionId), policy: { approve: ['shell'] } })).status).toBe(202)
    const pending = await pendingOf(sessionId)
    expect(pending).toMatchObject({ kind: 'approval', tool: 'shell', input: JSON.stringify({ command: `echo ${sessionId} >> ${ledger()}` }) })
    expect(pending.answerUrl).toContain(`/v1/awakeables/${encodeURIComponent(pending.id)}/resolve?token=`)
    expect(ledgerLines(sessionId)).toBe(0)
    // A message sent while the run waits is delivered after the answer, at the next turn boundary.
    const steer = `${STEER} while waiting (${sessionId})`
    const sent = await post(`/v1/sessions/${sessionId}/messages`, { text: steer })
    expect(sent.status).toBe(202)
    await savedInInbox(((await sent.json()) as { id: string }).id)
    expect((await answerByLink(pending, { decision: 'approve' })).status).toBe(200)
    expect((await answerByLink(pending, { decision: 'deny' })).status).toBe(409)
    const done = await ended(sessionId)
    expect(done.runs[0]).toMatchObject({ status: 'completed', text: SHELL_DONE })
    expect(done.pending).toEqual([])
    expect(ledgerLines(sessionId)).toBe(1)
    const requests = requestsOf(shellPrompt(sessionId))
    expect(requests.map(request => messagesOf(request).flatMap(textsOf).filter(text => text === steer).length)).toEqual([0, 1])
    expect(textsOf(messagesOf(requests[1] as RecordedRequest).at(-1))).toEqual([steer])
  })

  it('a denied call becomes an error result with the reason, and the run goes on', async () => {
    const sessionId = `deny-${tag}`
    expect((await post(`/v1/sessions/${sessionId}/prompts`, { prompt: shellPrompt(sessionId), policy: { approve: ['shell'] } })).status).toBe(202)
    const pending = await pendingOf(sessionId)
    // With the API key this time (the answer link works without one).
    expect((await post(`/v1/awakeables/${encodeURIComponent(pending.id)}/resolve`, { decision: 'deny', reason: 'not on production' })).status).toBe(200)
    const done = await ended(sessionId)
    const denial = 'The user did not approve this call. Reason: not on production'
    expect(done.runs[0]).toMatchObject({ status: 'completed', text: `Done: ${denial}` })
    expect(done.turns.flatMap(turn => turn.content).filter(block => block.type === 'tool_result')).toEqual([{ type: 'tool_result', toolUseId: expect.any(String), content: denial, isError: true }])
    expect(ledgerLines(sessionId)).toBe(0)
  })

  it('a message to an idle session starts a run with it as the prompt', async () => {
    const sessionId = `approve-${tag}`
    const accepted = await post(`/v1/sessions/${sessionId}/messages`, { text: `hello idle ${tag}` })
    expect(accepted.status).toBe(202)
    expect(await accepted.json()).toEqual({ sessionId, id: expect.stringMatching(/^inv_/) })
    const done = await ended(sessionId, 2)
    expect(done.runs.map(run => [run.prompt, run.status, run.text])).toEqual([[shellPrompt(sessionId), 'completed', SHELL_DONE], [`hello idle ${tag}`, 'completed', `Echo: hello idle ${tag}`]])
  })

  /** Runs a 3-turn prompt (two shell turns, then the answer), steers it during turn 1, and checks what the model saw. */
  const steerDuringRun = async (sessionId: string, during: () => Promise<void> | void): Promise<void> => {
    const prompt = `shell: sleep 2 && echo one ${sessionId}\nshell: echo two`
    const steer = `${STEER} also mention the weather (${sessionId})`
    expect((await post(`/v1/sessions/${sessionId}/prompts`, { prompt })).status).toBe(202)
    await waitFor(() => requestsOf(prompt).length >= 1 || undefined, 60_000, 'the first model request')
    const sent = await post(`/v1/sessions/${sessionId}/messages`, { text: steer })
    expect(sent.status).toBe(202)
    await during()
    const done = await ended(sessionId)
    expect(done.runs).toHaveLength(1)
    const requests = requestsOf(prompt)
    const mentions = requests.map(request => messagesOf(request).flatMap(textsOf).filter(text => text === steer).length)
    // Requests of turns 1, 2, 3 (a request cut off by a kill is made again, with the same messages).
    const firstSeen = mentions.indexOf(1)
    expect(firstSeen, JSON.stringify(mentions)).toBeGreaterThan(0)
    expect(mentions.slice(0, firstSeen).every(count => count === 0)).toBe(true)
    expect(mentions.slice(firstSeen).every(count => count === 1), JSON.stringify(mentions)).toBe(true)
    // It is new in that request: the last user message, after the tool results of turn 1.
    const seenIn = requests[firstSeen] as RecordedRequest
    expect(textsOf(messagesOf(seenIn).at(-1))).toEqual([steer])
    expect(messagesOf(requests[firstSeen - 1] as RecordedRequest)).toHaveLength(messagesOf(seenIn).length - 2)
    expect(done.turns.filter(turn => turn.id.endsWith('-s')).map(turn => turn.content)).toEqual([[{ type: 'text', text: steer }]])
    await expectSteerEvent(sessionId, steer)
  }

  /** The steering message is in the session's event stream as a `steer` event. */
  const expectSteerEvent = async (sessionId: string, text: string): Promise<void> => {
    const events = await s().request(`/v1/sessions/${sessionId}/events`, { headers: { 'last-event-id': '0' } })
    const reader = events.body?.getReader()
    let stream = ''
    while (reader && !stream.includes('run:end')) stream += new TextDecoder().decode((await reader.read()).value)
    await reader?.cancel()
    expect(stream).toContain('event: steer')
    expect(stream).toContain(JSON.stringify(text).slice(1, -1))
  }

  it('a message sent during a 3-turn run reaches the model once, at the next turn boundary', async () => {
    await steerDuringRun(`steer-${tag}`, () => undefined)
  })

  it('recorded no journal mismatch', async () => {
    const query = JSON.stringify({ query: "SELECT id, last_failure FROM sys_invocation WHERE last_failure_error_code = 'RT0016' OR last_failure LIKE '%mismatch%'" })
    const rows = await fetch(`${s().adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: query })
    expect(((await rows.json()) as { rows: unknown[] }).rows).toEqual([])
    expect(s().output()).not.toMatch(/RT0016|journal mismatch|non-?determinis/i)
  })

  if (mode === 'normal') {
    it('a message sent just before the services are killed is delivered once when they are back', async () => {
      await steerDuringRun(`steer-kill-${tag}`, () => { s().services().current()?.kill('SIGKILL') })
    })

    it('SIGKILL of the services while an approval waits, then the answer: the approval stays pending and the call runs once', async () => {
      const sessionId = `approve-kill-${tag}`
      expect((await post(`/v1/sessions/${sessionId}/prompts`, { prompt: shellPrompt(sessionId), policy: { approve: ['shell'] } })).status).toBe(202)
      const pending = await pendingOf(sessionId)
      const killed = s().services().current()?.pid
      s().services().current()?.kill('SIGKILL')
      // The supervisor restarts them: the approval is still pending, the same one.
      await waitFor(() => (s().services().current()?.pid ?? killed) !== killed || undefined, 30_000, 'the restarted services')
      expect((await pendingOf(sessionId)).id).toBe(pending.id)
      await s().services().stop()
      // The services are down: the answer is queued in Restate and delivered when they are back.
      expect((await answerByLink(pending, { decision: 'approve' })).status).toBe(202)
      // A message is taken while they are down too: Restate keeps it (no id yet), and the tenant's admission saves it
      // in the inbox when they are back. It reaches the model once: in the running run at its next turn boundary, or,
      // when the run passed its last boundary before the inbox had it, as the prompt of the next run.
      const steer = `${STEER} sent while down (${sessionId})`
      const sent = await post(`/v1/sessions/${sessionId}/messages`, { text: steer })
      expect(sent.status).toBe(202)
      expect(await sent.json()).toEqual({ sessionId, note: expect.stringContaining('Restate keeps the message') })
      s().services().restart()
      const delivered = (view: View): number => view.turns.filter(turn => turn.id.endsWith('-s') && turn.content.some(block => block.text === steer)).length + view.runs.filter(run => run.prompt === steer).length
      const done = await waitFor(async () => {
        const current = await view(sessionId)
        return current && delivered(current) > 0 && current.runs.every(run => run.status !== 'running') && current.invocation?.status !== 'running' ? current : undefined
      }, 90_000, `the message to reach ${sessionId} and its runs to end`)
      expect(done.runs[0]).toMatchObject({ status: 'completed', text: SHELL_DONE })
      expect(delivered(done)).toBe(1)
      expect(done.pending).toEqual([])
      expect(ledgerLines(sessionId)).toBe(1)
      const mentions = requestsOf(shellPrompt(sessionId)).map(request => messagesOf(request).flatMap(textsOf).filter(text => text === steer).length)
      // It reached the model (its requests carry it, once), in the running run or as the next run's prompt.
      expect(Math.max(0, ...mentions), JSON.stringify(mentions)).toBe(1)
      expect((await answerByLink(pending, { decision: 'approve' })).status).toBe(409)
    })
  }
}

describe('humans in the loop over HTTP: normal, with SIGKILLs', { timeout: 120_000 }, () => {
  humansInTheLoop('normal', {})
})

describe('humans in the loop over HTTP: always replay', { timeout: 120_000 }, () => {
  humansInTheLoop('always replay', { ZIDANE_INACTIVITY_TIMEOUT_MS: '0' })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor as pollUntilDefined } from '../helpers/restate/restate-harness'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

interface Pending { id: string; answerUrl: string }
interface View { status: string; text?: string; pending: Pending[]; invocation?: { invocationId: string; status: string }; runs: Array<{ text?: string }> }
interface ErrorBody { error: { code: string; message: string } }
interface JournalEntry { index: number; entry_type: string; entry_json: string }

/** Polls `probe` (every 50 ms) until it yields a value; the harness's poller with this file's timeout. */
function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 40_000): Promise<T> {
  return pollUntilDefined(probe, timeoutMs, 'the e2e condition')
}

/**
 * Questions and downtime on the real stack. The services run with a 1 s inactivity timeout, so a run parked on a
 * question suspends within seconds (as it would with the production setting, only sooner).
 */
describe('questions, suspension and a stopped services process', () => {
  let stack: TestStack | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)
  beforeAll(async () => { stack = await startTestStack({ ZIDANE_INACTIVITY_TIMEOUT_MS: '1000' }) }, 120_000)
  afterAll(async () => { await stack?.destroy() })

  const prompt = (sessionId: string, text: string) => s().request(`/v1/sessions/${sessionId}/prompts`, { method: 'POST', body: JSON.stringify({ prompt: text }) })
  const viewWhenReady = async (sessionId: string): Promise<View | undefined> => {
    const response = await s().request(`/v1/sessions/${sessionId}`)
    return response.status === 200 ? ((await response.json()) as View) : undefined
  }
  const statusIs = (sessionId: string, status: string) => waitFor(async () => { const view = await viewWhenReady(sessionId); return view?.status === status ? view : undefined })
  const answerWithKey = (id: string, answer: unknown) => s().request(`/v1/awakeables/${encodeURIComponent(id)}/resolve`, { method: 'POST', body: JSON.stringify({ answer }) })
  const answerWithLink = (answerUrl: string, answer: unknown) => {
    const url = new URL(answerUrl)
    return fetch(`${s().gatewayUrl}${url.pathname}${url.search}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ answer }) })
  }
  const query = async <T>(sql: string): Promise<T[]> => {
    const response = await fetch(`${s().adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query: sql }) })
    return ((await response.json()) as { rows: T[] }).rows
  }

  /**
   * For each question of a run, the journal indexes where its registration with the resumer returned and where it
   * was first listed in `pending_questions` (read from the run's journal in Restate's tables).
   */
  async function registrationOrder(invocationId: string): Promise<Array<{ id: string; registeredAt: number | undefined; listedAt: number | undefined }>> {
    const journal = await query<JournalEntry>(`SELECT index, entry_type, entry_json FROM sys_journal WHERE id = '${invocationId}' ORDER BY index`)
    const parsed = journal.map(entry => ({ ...entry, json: JSON.parse(entry.entry_json) as { Command?: Record<string, Record<string, unknown>>; Notification?: { Completion?: Record<string, { completion_id: number }> } } }))
    const registrations = parsed.flatMap(entry => {
      const call = entry.json.Command?.Call as { request: { invocation_target: { VirtualObject?: { key: string; handler: string } } }; result_completion_id: number } | undefined
      const target = call?.request.invocation_target.VirtualObject
      return call && target?.handler === 'register' ? [{ id: target.key, completionId: call.result_completion_id }] : []
    })
    const listings = parsed.flatMap(entry => {
      const set = entry.json.Command?.SetState as { key: string; value: number[] } | undefined
      return set?.key === 'pending_questions' ? [{ index: entry.index, ids: (JSON.parse(Buffer.from(set.value).toString('utf8')) as Pending[]).map(question => question.id) }] : []
    })
    return registrations.map(({ id, completionId }) => ({
      id,
      registeredAt: parsed.find(entry => entry.json.Notification?.Completion?.Call?.completion_id === completionId)?.index,
      listedAt: listings.find(listing => listing.ids.includes(id))?.index,
    }))
  }

  /** Polls GET without pausing until a question not in `answered` is listed: the earliest moment a client can see it. */
  async function nextQuestion(sessionId: string, answered: Set<string>): Promise<Pending> {
    const deadline = Date.now() + 30_000
    while (Date.now() < deadline) {
      const fresh = (await viewWhenReady(sessionId))?.pending.find(question => !answered.has(question.id))
      if (fresh) return fresh
    }
    throw new Error(`no new question in ${sessionId}`)
  }

  it('a question answered the instant it is listed is answered (200), never 404', async () => {
    const sessions = ['instant-1', 'instant-2', 'instant-3']
    const invocations: string[] = []
    for (const sessionId of sessions) {
      const accepted = await prompt(sessionId, 'ask: first?\nask: second?\nask: third?')
      expect(accepted.status).toBe(202)
      invocations.push(((await accepted.json()) as { invocationId: string }).invocationId)
    }
    const statuses = await Promise.all(sessions.map(async sessionId => {
      const answered = new Set<string>()
      const codes: number[] = []
      for (const [index, answer] of ['one', 'two', 'three'].entries()) {
        const question = await nextQuestion(sessionId, answered)
        answered.add(question.id)
        const response = index % 2 === 0 ? await answerWithKey(question.id, answer) : await answerWithLink(question.answerUrl, answer)
        codes.push(response.status)
      }
      return codes
    }))
    expect(statuses.flat()).toEqual(Array(9).fill(200))
    for (const sessionId of sessions) {
      const done = await statusIs(sessionId, 'completed')
      expect(done.runs.at(-1)?.text).toBe('You said: one / two / three')
    }
    // Why no answer can miss: every question's registration returned before the question was listed.
    for (const invocationId of invocations) {
      const order = await registrationOrder(invocationId)
      expect(order).toHaveLength(3)
      for (const { registeredAt, listedAt } of order) expect(registeredAt ?? Infinity).toBeLessThan(listedAt ?? -1)
    }
  })

  it('an answer to a question of a cancelled run gets 409 question_closed; the resumer keeps only a tombstone', async () => {
    expect((await prompt('closed-q', 'ask: will anyone answer?')).status).toBe(202)
    const question = await waitFor(async () => (await viewWhenReady('closed-q'))?.pending[0])
    expect((await s().request('/v1/sessions/closed-q/cancel', { method: 'POST' })).status).toBe(202)
    await waitFor(async () => { const view = await viewWhenReady('closed-q'); return view?.status === 'cancelled' && view.pending.length === 0 ? view : undefined })
    for (const response of [await answerWithLink(question.answerUrl, 'too late'), await answerWithKey(question.id, 'too late')]) {
      expect(response.status).toBe(409)
      expect(((await response.json()) as ErrorBody).error.code).toBe('question_closed')
    }
    const [record] = await query<{ value_utf8: string }>(`SELECT value_utf8 FROM state WHERE service_name = 'resumer' AND service_key = '${question.id}' AND key = 'question'`)
    const tombstone = JSON.parse(record?.value_utf8 ?? 'null') as Record<string, unknown>
    expect(tombstone).toMatchObject({ state: 'closed', reason: 'cancelled' })
    expect(tombstone).not.toHaveProperty('question')
    const cleanup = await query<{ status: string }>(`SELECT status FROM sys_invocation WHERE target_service_name = 'resumer' AND target_service_key = '${question.id}' AND target_handler_name = 'forget'`)
    expect(cleanup).toEqual([{ status: 'scheduled' }])
  })

  it("a run parked on a question lists it while Restate suspends the run; the read is the session's own, and it completes when answered", async () => {
    expect((await prompt('parked', 'ask: still there?')).status).toBe(202)
    const waiting = await waitFor(async () => { const view = await viewWhenReady('parked'); return view?.pending[0] ? view : undefined })
    const invocationId = waiting.invocation?.invocationId ?? ''
    await waitFor(async () => (await query<{ status: string }>(`SELECT status FROM sys_invocation WHERE id = '${invocationId}'`))[0]?.status === 'suspended' || undefined)
    // Suspended in Restate, running for the session: the gateway reports the session's record, never Restate's tables.
    const suspended = await viewWhenReady('parked')
    expect(suspended).toMatchObject({ status: 'running', invocation: { invocationId, status: 'running' } })
    const [question] = suspended?.pending ?? []
    expect(question).toBeDefined()
    expect((await answerWithKey(question?.id ?? '', 'yes')).status).toBe(200)
    const done = await statusIs('parked', 'completed')
    expect(done.runs.at(-1)?.text).toBe('You said: yes')
  })

  it('accepts a prompt and an answer while the services process is stopped; both complete after its restart', async () => {
    expect((await prompt('down-ask', 'ask: which region?')).status).toBe(202)
    const question = await waitFor(async () => (await viewWhenReady('down-ask'))?.pending[0])
    await s().services().stop()
    const sent = await prompt('down-prompt', 'hello while down')
    expect(sent.status).toBe(202)
    // No services process admits it in time: Restate keeps it, and the tenant's admission starts it when they are back.
    expect(await sent.json()).toEqual({ sessionId: 'down-prompt', note: expect.stringContaining('Restate keeps the prompt') })
    const answered = await answerWithKey(question.id, 'eu-west')
    expect(answered.status).toBe(202)
    s().services().restart()
    expect((await statusIs('down-prompt', 'completed')).runs.at(-1)?.text).toBe('Echo: hello while down')
    expect((await statusIs('down-ask', 'completed')).runs.at(-1)?.text).toBe('You said: eu-west')
  }, 60_000)
})

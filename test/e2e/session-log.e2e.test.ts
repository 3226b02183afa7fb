import { setTimeout as sleep } from 'node:timers/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitFor } from '../helpers/restate/restate-harness'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

interface StreamedEvent { seq: number; type: string; data: Record<string, unknown> }
interface Pending { id: string; answerUrl: string }
interface Page { from: number; to: number; total: number; limit: number; nextTurnsAfter: number | null; previousTurnsAfter: number | null }
interface View { status: string; counts: { turns: number; runs: number }; turns: Array<{ id: string; role: string }>; page: Page; runs: unknown[]; pending: Pending[]; usage: { modelRequests: number; turns: number } }

/** A live SSE viewer: the durable events it received (frames with an `id`), until `close()`. */
interface Viewer { events: StreamedEvent[]; ready: Promise<void>; close(): void }

function openViewer(stack: TestStack, sessionId: string, lastEventId?: number): Viewer {
  const controller = new AbortController()
  const events: StreamedEvent[] = []
  const headers: Record<string, string> = { authorization: `Bearer ${stack.apiKeys[0]}`, ...(lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) }) }
  const ready = (async () => {
    const response = await fetch(`${stack.gatewayUrl}/v1/sessions/${sessionId}/events`, { headers, signal: controller.signal })
    if (response.status !== 200 || !response.body) throw new Error(`stream answered ${response.status}`)
    void (async () => {
      const decoder = new TextDecoder()
      let buffered = ''
      try {
        for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
          buffered += decoder.decode(chunk, { stream: true })
          const frames = buffered.split('\n\n')
          buffered = frames.pop() ?? ''
          for (const frame of frames) {
            const data = frame.split('\n').find(line => line.startsWith('data: '))
            if (frame.startsWith('id: ') && data) events.push(JSON.parse(data.slice(6)) as StreamedEvent)
          }
        }
      } catch {
        // closed by the test
      }
    })()
  })()
  return { events, ready, close: () => controller.abort() }
}

/** Sum of a Prometheus counter over its labels. */
async function counter(stack: TestStack, name: string): Promise<number> {
  const text = await (await fetch(stack.metricsUrl)).text()
  return text.split('\n').filter(line => line.startsWith(`${name}{`) || line.startsWith(`${name} `)).reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0)
}

describe('the session log over HTTP', () => {
  let stack: TestStack | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)
  // A small history budget, so a long session compacts; many streams for one key, for the idle-viewer test.
  beforeAll(async () => {
    // The live hubs' registry refreshes (one per replica and gateway, not per viewer) are slowed to 10 min: the idle
    // test counts every invocation the server starts, and only the viewers' own must be 0.
    stack = await startTestStack({ ZIDANE_COMPACT_BUDGET_TOKENS: '3000', GATEWAY_MAX_EVENT_STREAMS: '150', ZIDANE_LIVE_LEASE_MS: '600000', ZIDANE_LIVE_REFRESH_MS: '600000' }, { tenants: 1 })
  }, 120_000)
  afterAll(async () => { await stack?.destroy() })

  const prompt = async (sessionId: string, body: Record<string, unknown>, query = ''): Promise<Response> => s().request(`/v1/sessions/${sessionId}/prompts${query}`, { method: 'POST', body: JSON.stringify(body) })
  const view = async (sessionId: string, query = ''): Promise<View> => (await s().request(`/v1/sessions/${sessionId}${query}`)).json() as Promise<View>

  it('pushes the events to a viewer as they happen; a reconnect with Last-Event-ID neither loses nor repeats one', async () => {
    expect((await prompt('log-ask', { prompt: 'ask: your name?' })).status).toBe(202)
    const pending = await waitFor(async () => {
      const response = await s().request('/v1/sessions/log-ask')
      return response.status === 200 ? ((await response.json()) as View).pending[0] : undefined
    }, 30_000, 'the question')
    const first = openViewer(s(), 'log-ask')
    await first.ready
    await waitFor(() => first.events.find(event => event.type === 'question'), 30_000, 'the question event')
    first.close()
    const seen = first.events.at(-1)?.seq ?? 0
    expect((await fetch(pending.answerUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ answer: 'Ada' }) })).status).toBe(200)
    const second = openViewer(s(), 'log-ask', seen)
    await second.ready
    await waitFor(() => second.events.find(event => event.type === 'run:end'), 30_000, 'the end of the run')
    second.close()
    const all = [...first.events, ...second.events]
    expect(all.map(event => event.seq)).toEqual(all.map((_event, index) => index + 1))
    expect(all.map(event => event.type)).toEqual(['run:start', 'tool:start', 'question', 'tool:end', 'turn:end', 'turn:end', 'run:end'])
    expect(all.at(-2)?.data.text).toBe('You said: Ada')
  })

  it('answers HEAD on the stream at once', async () => {
    const response = await s().request('/v1/sessions/log-ask/events', { method: 'HEAD', signal: AbortSignal.timeout(10_000) })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
  })

  it('100 viewers of an idle session for 60 s start no invocation', async () => {
    expect((await prompt('log-idle', { prompt: 'hello' }, '?wait=true')).status).toBe(200)
    const viewers = Array.from({ length: 100 }, () => openViewer(s(), 'log-idle'))
    await Promise.all(viewers.map(viewer => viewer.ready))
    await waitFor(() => viewers.every(viewer => viewer.events.some(event => event.type === 'run:end')) || undefined, 60_000, 'every viewer caught up')
    await sleep(2_000) // the shared watch parks
    const before = await counter(s(), 'restate_invoker_concurrency_slots_acquired')
    await sleep(60_000)
    const after = await counter(s(), 'restate_invoker_concurrency_slots_acquired')
    const parked = await s().request('/v1/sessions/log-idle') // (after the measure) the session is still served
    for (const viewer of viewers) viewer.close()
    expect(parked.status).toBe(200)
    expect(after - before).toBe(0)
  }, 150_000)

  it('a session grown past 5,000 turns through the real handlers still runs, compacts and serves pages', async () => {
    // Each run: 240 tool calls (the demo model reads the todo list once per line), so about 482 turns a run.
    const lines = Array.from({ length: 240 }, () => 'todos:').join('\n')
    for (let run = 0; run < 11; run++) {
      const response = await prompt('log-long', { prompt: lines, maxTurns: 300 }, '?wait=true')
      expect(response.status, await response.clone().text()).toBe(200)
      expect(((await response.json()) as { status: string }).status).toBe('completed')
    }
    const latest = await view('log-long')
    expect(latest.counts.turns).toBeGreaterThan(5_000)
    expect(latest.page).toEqual({ from: latest.counts.turns - 50, to: latest.counts.turns, total: latest.counts.turns, limit: 50, nextTurnsAfter: null, previousTurnsAfter: latest.counts.turns - 100 })
    expect(latest.turns).toHaveLength(50)
    expect(latest.runs).toHaveLength(11)
    expect(latest.usage.modelRequests).toBe(11 * 241)
    const oldest = await view('log-long', '?turnsAfter=0&limit=3')
    expect(oldest.turns.map(turn => turn.role)).toEqual(['user', 'assistant', 'user'])
    expect(oldest.page).toMatchObject({ from: 0, to: 3, nextTurnsAfter: 3, previousTurnsAfter: null })
    // The header says where the next run's history starts: the compaction checkpoint moved past the old runs.
    const [row] = await s().request('/v1/sessions/log-long').then(() => fetch(`${s().adminUrl}/query`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ query: "SELECT value_utf8 FROM state WHERE service_name = 'session' AND service_key LIKE '%~log-long' AND key = 'zidane_session'" }),
    })).then(async response => ((await response.json()) as { rows: Array<{ value_utf8: string }> }).rows)
    const header = JSON.parse(row?.value_utf8 ?? '{}') as { historyFrom: number; runFrom: number; turnCount: number }
    expect(header.turnCount).toBe(latest.counts.turns)
    expect(header.historyFrom).toBeGreaterThan(4_000)
    expect(header.runFrom).toBeGreaterThan(5)
    expect(JSON.stringify(header).length).toBeLessThan(2_000)
    // And one more run of the long session works.
    const last = await prompt('log-long', { prompt: 'hello' }, '?wait=true')
    expect(((await last.json()) as { text: string }).text).toBe('Echo: hello')
  }, 600_000)
})

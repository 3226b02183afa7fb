import * as clients from '@restatedev/restate-sdk-clients'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { LIVE_REPLICAS_KEY, liveReplicasInterface } from '../../contract/live-replicas'
import { lastUserText, start, streamedWords } from '../../support/anthropic-server'
import type { FakeAnthropicServer } from '../../support/anthropic-server'
import { openSseViewer } from '../../support/sse-client'
import type { SseFrame, SseViewer } from '../../support/sse-client'
import { startReplicaStack } from '../helpers/replica-stack'
import type { ReplicaStack, ServicesReplica } from '../helpers/replica-stack'

const API_KEY = 'sk-ant-e2e'
/** Short, so a killed replica drops out within the test; refreshed every 2 s. */
const LEASE_MS = 6_000

const isDelta = (frame: SseFrame): boolean => frame.event === 'model:delta'
const payload = (frame: SseFrame | undefined): Record<string, unknown> => (frame?.data.data ?? {}) as Record<string, unknown>

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}

describe('live deltas with two services replicas and no ZIDANE_LIVE_URLS', { timeout: 240_000 }, () => {
  let stack: ReplicaStack | undefined
  let model: FakeAnthropicServer | undefined
  const viewers: SseViewer[] = []
  const s = (): ReplicaStack => { if (!stack) throw new Error('no stack'); return stack }
  afterEach(context => {
    if (context.task.result?.state === 'fail') console.error(`---- replica stack output ----\n${stack?.output().split('\n').slice(-300).join('\n') ?? ''}`)
  })
  beforeAll(async () => {
    model = await start({ apiKey: API_KEY })
    model.setHandler(request => (lastUserText(request) === 'fail over' ? streamedWords(150, 40) : streamedWords(30, 30)))
    stack = await startReplicaStack({ ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_BASE_URL: model.url, ZIDANE_MODEL: 'claude-test', ZIDANE_LIVE_LEASE_MS: String(LEASE_MS) }, { ZIDANE_LIVE_REFRESH_MS: '500' })
  }, 180_000)
  afterAll(async () => {
    for (const viewer of viewers) viewer.close()
    await stack?.destroy()
    await model?.close()
  })

  const registered = async (): Promise<string[]> => (await clients.connect({ url: s().restate.ingressUrl }).client(liveReplicasInterface, LIVE_REPLICAS_KEY).list()).map(replica => replica.url).sort()
  const prompt = async (sessionId: string, text: string): Promise<void> => {
    const response = await fetch(`${s().gatewayUrl}/v1/sessions/${sessionId}/prompts`, { method: 'POST', headers: { authorization: `Bearer ${s().apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: text }) })
    expect(response.status).toBe(202)
    await response.arrayBuffer()
  }
  const view = async (sessionId: string): Promise<SseViewer> => until(async () => {
    const viewer = await openSseViewer(`${s().gatewayUrl}/v1/sessions/${sessionId}/events`, { authorization: `Bearer ${s().apiKey}` })
    if (viewer.status === 200) return viewers[viewers.push(viewer) - 1]
    viewer.close()
    return undefined
  }, 30_000, `the event stream of ${sessionId}`)
  /** The replica whose output shows it ran (or replayed) the session's run. */
  const runnerOf = (sessionId: string): ServicesReplica | undefined => s().replicas.find(replica => replica.output().includes(`~${sessionId}/run]`))

  it('each replica registers its hub in Restate, and the gateway finds both', async () => {
    const expected = s().replicas.map(replica => replica.liveUrl).sort()
    expect(await until(async () => ((await registered()).join() === expected.join() ? true : undefined), 30_000, 'both registrations')).toBe(true)
  })

  it("a session's deltas reach its viewer through the gateway, whichever replica runs it", async () => {
    const ids = Array.from({ length: 8 }, (_, index) => `spread-${index}`)
    const seen = await Promise.all(ids.map(async id => {
      await prompt(id, `stream ${id}`)
      const viewer = await view(id)
      const turnEnd = await viewer.waitFor(frame => frame.event === 'turn:end', 60_000)
      return { id, deltas: viewer.frames.slice(0, viewer.frames.indexOf(turnEnd)).filter(isDelta), text: payload(turnEnd).text }
    }))
    for (const { deltas, text } of seen) {
      expect(deltas.length).toBeGreaterThanOrEqual(5)
      expect(deltas.map(frame => String(payload(frame).text)).join('')).toBe(text)
    }
    const runners = new Set(ids.map(id => runnerOf(id)?.name))
    expect(runners.has(undefined)).toBe(false)
    expect(runners.size, 'Restate ran the sessions on both replicas').toBe(2)
  })

  it('a replica killed mid-stream: the viewer gets the new attempt from the other one, and the killed hub drops out after its lease', async () => {
    await prompt('fail-over', 'fail over')
    const viewer = await view('fail-over')
    await viewer.waitFor(frame => isDelta(frame) && Number(payload(frame).offset) > 30, 60_000)
    const victim = await until(() => runnerOf('fail-over'), 10_000, 'the replica running fail-over')
    expect(await registered()).toContain(victim.liveUrl)
    await victim.kill()
    const killedAtMs = performance.now()
    const superseded = await viewer.waitFor(frame => frame.event === 'model:superseded', 60_000)
    const fresh = await viewer.waitFor(frame => isDelta(frame) && payload(frame).attempt === payload(superseded).nextAttempt, 60_000)
    expect(payload(fresh).offset).toBe(0)
    expect(runnerOf('fail-over')).toBeDefined()
    await until(async () => ((await registered()).includes(victim.liveUrl) ? undefined : true), LEASE_MS + 10_000, 'the killed hub to drop out')
    const droppedAfterMs = performance.now() - killedAtMs
    // Its last refresh was at most a third of the lease before the kill: it outlives the kill by two thirds of it.
    expect(droppedAfterMs).toBeGreaterThan((LEASE_MS * 2) / 3 - 1_000)
    const turnEnd = await viewer.waitFor(frame => frame.event === 'turn:end', 60_000)
    expect(String(payload(turnEnd).text)).toContain('word149')
  })

  it('a replica that stops cleanly deregisters its hub at once', async () => {
    const [first, second] = s().replicas
    const [running, killed] = first.process()?.exitCode === null && first.process()?.signalCode === null ? [first, second] : [second, first]
    await killed.start()
    await until(async () => ((await registered()).includes(killed.liveUrl) ? true : undefined), 30_000, 'the restarted replica to register')
    await running.stop()
    const stoppedAtMs = performance.now()
    await until(async () => ((await registered()).includes(running.liveUrl) ? undefined : true), LEASE_MS, 'the stopped hub to deregister')
    expect(performance.now() - stoppedAtMs).toBeLessThan(LEASE_MS / 2)
  })
})

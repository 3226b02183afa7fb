import { request as httpRequest } from 'node:http'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { leaderActions } from '../../scripts/cluster/partition-leaders'
import { startTestCluster } from '../helpers/cluster'
import type { TestCluster } from '../helpers/cluster'

/** POSTs JSON on a new connection (no keep-alive), so the gateways' balancer sees one connection per request. */
function postOnNewConnection(url: string, key: string, body: unknown): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: 'POST', agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } }, response => {
      let text = ''
      response.on('data', (chunk: Buffer) => { text += chunk.toString() })
      response.on('end', () => resolve({ status: response.statusCode ?? 0, json: text ? JSON.parse(text) as unknown : undefined }))
    })
    request.on('error', reject)
    request.end(JSON.stringify(body))
  })
}

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined)
    if (value !== undefined) return value
    await new Promise(resolve => setTimeout(resolve, 250))
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('the loopback cluster (3 Restate nodes, 2 services replicas, 2 gateways)', { timeout: 240_000 }, () => {
  let cluster: TestCluster | undefined
  const c = (): TestCluster => { if (!cluster) throw new Error('no cluster'); return cluster }
  afterEach(context => {
    if (context.task.result?.state === 'fail') console.error(`---- cluster output (${context.task.name}) ----\n${cluster?.output().slice(-200).join('\n') ?? ''}`)
  })
  beforeAll(async () => {
    // The demo model; snapshots every few records, so the repository fills within the test.
    cluster = await startTestCluster({ ANTHROPIC_API_KEY: '', RESTATE_WORKER__SNAPSHOTS__SNAPSHOT_INTERVAL_NUM_RECORDS: '10' })
  }, 240_000)
  afterAll(async () => { await cluster?.destroy() }, 120_000)

  const status = async (sessionId: string): Promise<{ status: string; pending: Array<{ answerUrl: string }>; runs: Array<{ text?: string }> } | undefined> => {
    const response = await c().request(`/v1/sessions/${sessionId}`)
    return response.status === 200 ? await response.json() as { status: string; pending: Array<{ answerUrl: string }>; runs: Array<{ text?: string }> } : undefined
  }

  it('serves sessions through both gateways and both services replicas, with partition leaders on more than one node', async () => {
    // A connection Restate drops while a fresh cluster settles its partition leaders cuts a run's call short: the run
    // then reports the write interrupted (at most once), which is right, and the session is asked again once.
    let interrupted = 0
    for (let index = 0; index < 6; index++) {
      const ask = (sessionId: string) => postOnNewConnection(`${c().gatewayUrl}/v1/sessions/${sessionId}/prompts?wait=true`, c().apiKey, { prompt: `write: f.txt spread-${index}\nread: f.txt` })
      let { status: code, json } = await ask(`spread-${index}`)
      if ((json as { text?: string } | undefined)?.text?.includes('[Tool use interrupted]') === true) {
        interrupted += 1
        ;({ status: code, json } = await ask(`spread-${index}-again`))
      }
      expect(code).toBe(200)
      expect((json as { status: string; text: string }).status).toBe('completed')
      expect((json as { text: string }).text).toContain(`spread-${index}`)
    }
    expect(interrupted).toBeLessThanOrEqual(1)
    expect(Object.values(c().balancers.gateway.counts()).filter(count => count > 0).length).toBe(2)
    expect(Object.values(c().balancers.services.counts()).filter(count => count > 0).length).toBe(2)
    const leaders = await Promise.all(c().nodeFabricUrls.map(url => leaderActions(url)))
    expect(leaders.filter(actions => actions > 0).length).toBeGreaterThanOrEqual(2)
  })

  it('fills the snapshot repository, so Restate never warns that automatic log trimming is disabled', async () => {
    for (let index = 0; index < 4; index++) await c().request(`/v1/sessions/snap-${index}/prompts?wait=true`, { method: 'POST', body: { prompt: 'todo: a | b\ntodos:' } })
    await waitFor(async () => ((await c().snapshotStore.objectCount()) > 0 ? true : undefined), 120_000, 'a snapshot in the repository')
    expect(c().output().filter(line => line.includes('log trimming is disabled'))).toEqual([])
  })

  it('a run continues when one Restate node is killed mid-run and stays down', async () => {
    const asked = await c().request('/v1/sessions/node-loss/prompts', { method: 'POST', body: { prompt: 'ask: which region?' } })
    expect(asked.status).toBe(202)
    const question = await waitFor(async () => (await status('node-loss'))?.pending[0], 120_000, 'the question')
    // The node doing the most partition-leader work goes: its partitions must move to the others.
    const leaders = await Promise.all(c().nodeFabricUrls.map(url => leaderActions(url)))
    const victim = `restate-${leaders.indexOf(Math.max(...leaders)) + 1}`
    await c().killForGood(victim)
    const answered = await waitFor(async () => {
      const response = await fetch(question.answerUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ answer: 'eu-west' }) })
      return response.status === 200 || response.status === 202 ? response.status : undefined
    }, 120_000, 'the answer to be accepted')
    expect([200, 202]).toContain(answered)
    const done = await waitFor(async () => { const view = await status('node-loss'); return view?.status === 'completed' ? view : undefined }, 180_000, `the run to complete with ${victim} down`)
    expect(done.runs.at(-1)?.text).toContain('You said: eu-west')
    // New work starts and finishes on the two nodes left, sub-agents included.
    const fresh = await waitFor(async () => {
      const response = await c().request('/v1/sessions/after-loss/prompts?wait=true', { method: 'POST', body: { prompt: 'spawn: left | right' } })
      return response.status === 200 ? await response.json() as { status: string; text: string } : undefined
    }, 180_000, 'a new run on two nodes')
    expect(fresh.status).toBe('completed')
    expect(fresh.text).toContain('Echo: left')
    expect(fresh.text).toContain('Echo: right')
  })
})

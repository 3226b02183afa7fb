import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isHealthy, waitUntil } from '../../scripts/stack/wait'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

const MAX_RUNS = 20
/** Nine more tenants: with the stack's second, ten keys send a burst; the first steers. */
const EXTRA_KEYS = Array.from({ length: 9 }, (_, index) => `tenant-${index + 2}-key-0123456789`)
/** A tenant of its own for the idempotency test. */
const IDEMPOTENCY_KEY = 'tenant-idempotency-key-0123456789'

describe('runs per API key on the real stack', () => {
  let stack: TestStack | undefined
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)
  beforeAll(async () => { stack = await startTestStack({ GATEWAY_MAX_CONCURRENT_RUNS: String(MAX_RUNS) }, { extraApiKeys: [...EXTRA_KEYS, IDEMPOTENCY_KEY] }) }, 120_000)
  afterAll(async () => { await stack?.destroy() })

  /** POSTs `body` to a session route with `key`; `ask:` prompts keep their run unfinished (it waits for an answer). */
  const post = (key: string, path: string, body: unknown, headers: Record<string, string> = {}) => s().request(path, { method: 'POST', key, body: JSON.stringify(body), headers })
  const statuses = (responses: Response[]): number[] => responses.map(response => response.status)

  /** Sends `count` requests of one key over `connections` at a time (a client's pool): each starts as one ends. */
  const overPool = async (connections: number, count: number, request: (index: number) => Promise<Response>): Promise<Response[]> => {
    const responses: Response[] = []
    let next = 0
    await Promise.all(Array.from({ length: connections }, async () => {
      while (next < count) responses.push(await request(next++))
    }))
    return responses
  }

  it('admits exactly the cap under a burst: ten keys each send 20 prompts over 10 connections, none refused, the 21st is', async () => {
    const keys = [s().apiKeys[1], ...EXTRA_KEYS]
    const burst = (await Promise.all(keys.map(key => overPool(10, MAX_RUNS, index => post(key, `/v1/sessions/burst-${index}/prompts`, { prompt: 'ask: burst?' }))))).flat()
    const refused = statuses(burst).filter(status => status !== 202)
    expect(refused, `${refused.length} of ${burst.length} refused`).toEqual([])
    const past = await Promise.all(keys.map(key => post(key, '/v1/sessions/burst-past/prompts', { prompt: 'ask: one too many?' })))
    expect(statuses(past)).toEqual(keys.map(() => 429))
  }, 60_000)

  it('counts steering that starts a run: 25 idle sessions on a key capped at 20 get 5 refusals; steering a running session is taken', async () => {
    const key = s().apiKeys[0]
    const steered = await Promise.all(Array.from({ length: 25 }, (_, index) => post(key, `/v1/sessions/idle-${index}/messages`, { text: 'ask: steered?' })))
    expect(statuses(steered).filter(status => status === 202)).toHaveLength(MAX_RUNS)
    const refusals = steered.filter(response => response.status === 429)
    expect(refusals).toHaveLength(5)
    for (const refusal of refusals) {
      expect(refusal.headers.get('retry-after')).toBe('5')
      expect(await refusal.json()).toMatchObject({ error: { code: 'too_many_runs' } })
    }
    const running = steered.findIndex(response => response.status === 202)
    expect((await post(key, `/v1/sessions/idle-${running}/messages`, { text: 'one more thing' })).status).toBe(202)
    expect((await post(key, '/v1/sessions/idle-new/prompts', { prompt: 'hi' })).status).toBe(429)
  }, 60_000)

  it('answers 422 to an Idempotency-Key reused with another body, also after a gateway restart', async () => {
    const key = IDEMPOTENCY_KEY
    // Quotes, backslashes and SQL wildcards are plain text in the admission's state key; 200 characters is the longest key taken.
    const headers = { 'idempotency-key': "it's a \\%_key".padEnd(200, 'x') }
    const first = await post(key, '/v1/sessions/idem/prompts', { prompt: 'ask: first?' }, headers)
    expect(first.status).toBe(202)
    const { invocationId } = (await first.json()) as { invocationId: string }
    const gateway = s().processes.find(process => process.name === 'gateway')
    if (!gateway) throw new Error('no gateway process')
    await gateway.stop()
    gateway.restart()
    await waitUntil(() => isHealthy(`${s().gatewayUrl}/healthz`), 30_000, 'the gateway')
    const reused = await post(key, '/v1/sessions/idem/prompts', { prompt: 'ask: another body?' }, headers)
    expect(reused.status).toBe(422)
    expect(await reused.json()).toMatchObject({ error: { code: 'idempotency_key_reused' } })
    const repeated = await post(key, '/v1/sessions/idem/prompts', { prompt: 'ask: first?' }, headers)
    expect(repeated.status).toBe(202)
    expect(await repeated.json()).toMatchObject({ invocationId })
  }, 60_000)
})

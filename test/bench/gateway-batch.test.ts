import http from 'node:http'
import type net from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runGatewayBatch, sessionsPerMinute } from '../../bench/lib/gateway-batch'

/*
 * The batch §14 sends through a gateway, against a local HTTP server answering as the gateway does: completed runs,
 * refused ones, the bearer key, and arrivals at a fixed interval.
 */
describe('bench gateway batch', () => {
  const arrivals: number[] = []
  const keys = new Set<string>()
  let url = ''
  const server = http.createServer((request, response) => {
    arrivals.push(performance.now())
    keys.add(request.headers.authorization ?? '')
    const refused = request.url?.includes('/refused-') ?? false
    response.writeHead(refused ? 429 : 200, { 'content-type': 'application/json' })
    response.end(JSON.stringify(refused ? { error: { code: 'too_many_runs' } } : { status: 'completed' }))
  })
  beforeAll(async () => { await new Promise<void>(resolve => { server.listen(0, '127.0.0.1', () => resolve()) }); url = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}` })
  afterAll(() => { server.close() })

  it('counts completed runs, names the failures, and sends the key', async () => {
    const batch = await runGatewayBatch({ gatewayUrl: url, apiKey: 'zk_test' }, ['ok-1', 'ok-2', 'refused-3'], 'hello', 0)
    expect(batch).toMatchObject({ completed: 2, sessions: 3, failures: ['too_many_runs'] })
    expect(batch.runMs).toHaveLength(3)
    expect(sessionsPerMinute(batch)).toBeCloseTo((2 / batch.wallMs) * 60_000)
    expect([...keys]).toEqual(['Bearer zk_test'])
  })

  it('sends arrivals at the fixed interval, not all at once', async () => {
    arrivals.length = 0
    await runGatewayBatch({ gatewayUrl: url, apiKey: 'zk_test' }, ['a', 'b', 'c'], 'hello', 100)
    expect((arrivals[2] ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThanOrEqual(150)
  })
})

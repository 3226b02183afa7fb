import { describe, expect, it } from 'vitest'
import type { ModelDelta } from '../../../src/providers'
import { testApiKey, useFakeServer, userRequest } from './fixture'

const sent: string[] = []

describe('fake server: tokens at a fixed rate', () => {
  const fixture = useFakeServer({ apiKey: testApiKey, deltaIntervalMs: 30, onEventSent: event => { if (event.event === 'content_block_delta') sent.push(JSON.stringify(event.data)) } })

  it('streams each delta of a message its interval after the one before, so the provider reports them while the request runs', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'one two three four' }] })
    const arrivals: Array<{ delta: ModelDelta; atMs: number }> = []
    const startedMs = performance.now()
    const response = await fixture.provider().stream(userRequest('hi'), delta => arrivals.push({ delta, atMs: performance.now() - startedMs }))
    expect(arrivals.map(arrival => arrival.delta.delta).join('')).toBe('one two three four')
    expect(arrivals).toHaveLength(4)
    const gaps = arrivals.slice(1).map((arrival, index) => arrival.atMs - (arrivals[index]?.atMs ?? 0))
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(20)
    expect(response.content).toEqual([{ type: 'text', text: 'one two three four' }])
    expect(sent).toHaveLength(4)
  })
})

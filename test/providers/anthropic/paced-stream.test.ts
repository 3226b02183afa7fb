import { describe, expect, it } from 'vitest'
import type { ModelDelta } from '../../../src/providers'
import { testApiKey, useFakeServer, userRequest } from './fixture'

/** What the server sent: each delta's send time, and how many deltas the provider had reported by then. */
const sent: Array<{ data: string; atMs: number; reportedBefore: number }> = []
const arrivals: Array<{ delta: ModelDelta; atMs: number }> = []

describe('fake server: tokens at a fixed rate', () => {
  const fixture = useFakeServer({
    apiKey: testApiKey,
    deltaIntervalMs: 30,
    onEventSent: (event) => {
      if (event.event === 'content_block_delta') sent.push({ data: JSON.stringify(event.data), atMs: performance.now(), reportedBefore: arrivals.length })
    },
  })

  it('streams each delta of a message its interval after the one before, so the provider reports them while the request runs', async () => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'one two three four' }] })
    const response = await fixture.provider().stream(userRequest('hi'), delta => arrivals.push({ delta, atMs: performance.now() }))
    expect(arrivals.map(arrival => arrival.delta.delta).join('')).toBe('one two three four')
    expect(arrivals).toHaveLength(4)
    expect(sent).toHaveLength(4)
    // The server waits its interval before each delta (a timer never fires early; 1 ms for the clock's rounding).
    const gaps = sent.slice(1).map((event, index) => event.atMs - (sent[index]?.atMs ?? 0))
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(29)
    // The provider reported the first delta before the server sent the last one: it streams, it does not wait for the end.
    expect(sent.at(-1)?.reportedBefore).toBeGreaterThanOrEqual(1)
    expect(response.content).toEqual([{ type: 'text', text: 'one two three four' }])
  })
})

import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import { scriptedProvider } from 'zidane/testing'
import type { LiveDelta } from '../../../contract/live-delta'
import { createLiveHub, MAX_BUFFERED_BYTES } from '../../../services/live/live-hub'
import { childLiveSource, publishAgentDeltas } from '../../../services/live/agent-live'

function delta(overrides: Partial<LiveDelta> = {}): LiveDelta {
  return { sessionKey: 't~s', runId: 'r1', turn: 1, attempt: 'a1', kind: 'text', offset: 0, text: 'Hel', ...overrides }
}

describe('live hub', () => {
  it('gives a viewer that joins mid-attempt the attempt from its start, then the live deltas', () => {
    const hub = createLiveHub()
    hub.publish(delta())
    hub.publish(delta({ offset: 3, text: 'lo' }))
    const seen: string[] = []
    hub.subscribe('t~s', event => seen.push(event.text))
    hub.publish(delta({ offset: 5, text: '!' }))
    expect(seen).toEqual(['Hel', 'lo', '!'])
  })

  it('stops buffering an attempt past MAX_BUFFERED_BYTES, counting each delta and not only its text, and keeps streaming it', () => {
    const hub = createLiveHub()
    const live: string[] = []
    hub.subscribe('t~s', event => live.push(event.text))
    for (let offset = 0; offset < 40_000; offset++) hub.publish(delta({ offset, text: 'x' }))
    const replayed: LiveDelta[] = []
    hub.subscribe('t~s', event => replayed.push(event))
    expect(live).toHaveLength(40_000)
    expect(replayed.length).toBeGreaterThan(10_000)
    expect(replayed.length).toBeLessThan(MAX_BUFFERED_BYTES / 97 + 1)
    expect(replayed.map(event => event.offset)).toEqual(Array.from({ length: replayed.length }, (_, offset) => offset))
  })

  it('replaces the buffer when a new attempt of the same source starts', () => {
    const hub = createLiveHub()
    hub.publish(delta({ attempt: 'a1', text: 'old' }))
    hub.publish(delta({ attempt: 'a2', text: 'new' }))
    const seen: LiveDelta[] = []
    hub.subscribe('t~s', event => seen.push(event))
    expect(seen.map(event => [event.attempt, event.text])).toEqual([['a2', 'new']])
  })

  it('keeps the attempts of the session and of each child run apart, and drops one when its step ends', () => {
    const hub = createLiveHub()
    hub.publish(delta({ text: 'parent' }))
    hub.publish(delta({ runId: 'c1', attempt: 'b1', label: 'child-1', text: 'child' }))
    hub.endStep('t~s', 'r1', 1)
    const seen: string[] = []
    hub.subscribe('t~s', event => seen.push(event.text))
    expect(seen).toEqual(['child'])
    hub.endStep('t~s', 'c1')
    expect(hub.size()).toBe(1) // only the listener is left
  })

  it('ignores the end of a step that is not the one buffered', () => {
    const hub = createLiveHub()
    hub.publish(delta({ turn: 2 }))
    hub.endStep('t~s', 'r1', 1)
    const seen: string[] = []
    hub.subscribe('t~s', event => seen.push(event.text))
    expect(seen).toEqual(['Hel'])
  })

  it('sends nothing to viewers of other sessions and nothing after unsubscribe', () => {
    const hub = createLiveHub()
    const seen: string[] = []
    const unsubscribe = hub.subscribe('t~s', event => seen.push(event.text))
    hub.publish(delta({ sessionKey: 't~other', text: 'elsewhere' }))
    unsubscribe()
    hub.publish(delta({ text: 'late' }))
    expect(seen).toEqual([])
    expect(hub.size()).toBe(2) // two buffers, no listener
  })

  it('drops the buffer of an attempt that got no delta for ten minutes (its invocation moved to another process)', () => {
    let now = 0
    const hub = createLiveHub(() => now)
    hub.publish(delta({ runId: 'gone', text: 'old' }))
    now = 11 * 60_000
    hub.publish(delta({ sessionKey: 't~other', text: 'new' }))
    const seen: string[] = []
    hub.subscribe('t~s', event => seen.push(event.text))
    expect(seen).toEqual([])
  })

  it('keeps publishing to other viewers when one viewer throws', () => {
    const hub = createLiveHub()
    const seen: string[] = []
    hub.subscribe('t~s', () => { throw new Error('gone') })
    hub.subscribe('t~s', event => seen.push(event.text))
    hub.publish(delta())
    expect(seen).toEqual(['Hel'])
  })
})

describe('publishAgentDeltas', () => {
  it('publishes the text and thinking of a running agent and clears the buffer when the step ends', async () => {
    const hub = createLiveHub()
    const seen: LiveDelta[] = []
    hub.subscribe('t~s', event => seen.push(event))
    const agent = createAgent({ provider: scriptedProvider([{ text: 'hello there' }]) })
    publishAgentDeltas(agent, { sessionKey: 't~s' }, hub)
    const stats = await agent.run({ prompt: 'hi' })
    expect(seen.map(event => event.text).join('')).toBe(stats.text)
    expect(seen[0]).toMatchObject({ sessionKey: 't~s', runId: stats.runId, turn: 1, kind: 'text', offset: 0 })
    expect(seen[0]?.label).toBeUndefined()
    const late: LiveDelta[] = []
    hub.subscribe('t~s', event => late.push(event))
    expect(late).toEqual([])
  })

  it('names a child by its own label under its root session, as its durable events do', () => {
    expect(childLiveSource('t~s', 'research')).toEqual({ sessionKey: 't~s', label: 'research' })
    expect(childLiveSource('t~s:research', 'deeper')).toEqual({ sessionKey: 't~s', label: 'deeper' })
    expect(childLiveSource(undefined, 'x')).toBeUndefined()
  })
})

import { describe, expect, it } from 'vitest'
import type { LiveDelta } from '../../contract/live-delta'
import { createLiveTracker } from '../../ingress-gateway/live-tracker'
import type { LiveEvent } from '../../ingress-gateway/live-tracker'

function delta(overrides: Partial<LiveDelta> = {}): LiveDelta {
  return { sessionKey: 't~s', runId: 'r1', turn: 1, attempt: 'a1', kind: 'text', offset: 0, text: 'Hel', ...overrides }
}

function track(deltas: LiveDelta[]): LiveEvent[] {
  const events: LiveEvent[] = []
  const accept = createLiveTracker(event => events.push(event))
  for (const item of deltas) accept(item)
  return events
}

describe('live tracker', () => {
  it('announces a new attempt of the same turn as superseding the earlier one, then passes its deltas from offset 0', () => {
    const events = track([delta(), delta({ attempt: 'a2', text: 'Hello' })])
    expect(events).toEqual([
      { type: 'model:delta', data: { runId: 'r1', turn: 1, attempt: 'a1', kind: 'text', offset: 0, text: 'Hel' } },
      { type: 'model:superseded', data: { runId: 'r1', turn: 1, attempt: 'a1', nextAttempt: 'a2' } },
      { type: 'model:delta', data: { runId: 'r1', turn: 1, attempt: 'a2', kind: 'text', offset: 0, text: 'Hello' } },
    ])
  })

  it('drops deltas a reconnect replays and trims one that overlaps what was delivered', () => {
    const events = track([delta(), delta({ offset: 3, text: 'lo' }), delta(), delta({ offset: 0, text: 'Hello wor' })])
    expect(events.map(event => event.type === 'model:delta' && [event.data.offset, event.data.text])).toEqual([[0, 'Hel'], [3, 'lo'], [5, ' wor']])
  })

  it('drops late deltas of a superseded attempt instead of flipping back', () => {
    const events = track([delta(), delta({ attempt: 'a2' }), delta({ attempt: 'a1', offset: 3, text: 'lo' })])
    expect(events.map(event => event.type)).toEqual(['model:delta', 'model:superseded', 'model:delta'])
  })

  it('starts a later turn without a superseded event, and drops deltas of an earlier turn', () => {
    const events = track([delta(), delta({ turn: 2, attempt: 'a2' }), delta({ turn: 1, attempt: 'a3' })])
    expect(events.map(event => [event.type, event.data.turn])).toEqual([['model:delta', 1], ['model:delta', 2]])
  })

  it('counts offsets of text and thinking apart, and keeps children apart by label', () => {
    const events = track([
      delta({ kind: 'thinking', text: 'hmm' }), delta({ text: 'Hi' }),
      delta({ label: 'child', runId: 'c1', attempt: 'b1', text: 'Yo' }), delta({ label: 'child', runId: 'c1', attempt: 'b2', text: 'Yo!' }),
    ])
    expect(events.map(event => event.type === 'model:delta' ? `${event.data.label ?? '-'}:${event.data.kind}:${event.data.text}` : `${event.data.label ?? '-'}:superseded`))
      .toEqual(['-:thinking:hmm', '-:text:Hi', 'child:text:Yo', 'child:superseded', 'child:text:Yo!'])
  })
})

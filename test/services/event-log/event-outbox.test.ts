import type * as restate from '@restatedev/restate-sdk'
import { describe, expect, it } from 'vitest'
import type { EventDoorbell } from '../../../services/event-log/event-doorbell'
import type { NewSessionEvent } from '../../../contract/event-log'
import { createEventOutbox } from '../../../services/event-log/event-outbox'
import { createSessionLogSync, IN_TURN_RING_DELAY_MS } from '../../../services/event-log/session-log-sync'

interface Sent { key: string; handler: string; request: { events?: NewSessionEvent[] } }

/** A context that records the one-way sends the sinks journal (they use nothing else of it). */
function recordingContext(): { ctx: restate.ObjectContext; sent: Sent[] } {
  const sent: Sent[] = []
  const client = (key: string) => new Proxy({}, { get: (_target, handler: string) => (request: Sent['request']) => { sent.push({ key, handler, request }) } })
  const ctx = { key: 't1~s', request: () => ({ id: 'inv_1' }), objectSendClient: (_service: unknown, key: string) => client(key) } as unknown as restate.ObjectContext
  return { ctx, sent }
}

const event = (type: NewSessionEvent['type']): NewSessionEvent => ({ type, at: 1, data: {} })
const counts = { turns: 4, runs: 1 }

describe("a sub-agent's event outbox", () => {
  it('journals one append per turn boundary, with the tool events of the turn before it', () => {
    const { ctx, sent } = recordingContext()
    const outbox = createEventOutbox(ctx, 't1~root')
    outbox.publish([event('child:start')], counts)
    outbox.publish([event('tool:start')], counts)
    expect(sent).toHaveLength(1) // a turn in progress waits for its end
    outbox.publish([event('tool:end'), event('turn:end')], counts)
    outbox.flush() // nothing new: no send
    outbox.publish([event('tool:start')], counts)
    outbox.flush()
    expect(sent.map(send => [send.key, send.handler, send.request.events?.map(item => item.type)])).toEqual([
      ['t1~root', 'append', ['child:start']],
      ['t1~root', 'append', ['tool:start', 'tool:end', 'turn:end']],
      ['t1~root', 'append', ['tool:start']],
    ])
  })
})

describe("a session run's log sync", () => {
  const doorbell = (): { bell: EventDoorbell; rings: unknown[]; covers: unknown[] } => {
    const rings: unknown[] = []
    const covers: unknown[] = []
    return { bell: { ring: (key, state, laterMs) => { rings.push([key, state, laterMs]) }, covered: (key, state) => { covers.push([key, state]) }, idle: async () => undefined, calls: () => rings.length }, rings, covers }
  }

  it('rings the doorbell at every write with events (one in the middle of a turn may wait), and journals a sync with the counts only with a question and at a flush', () => {
    const { ctx, sent } = recordingContext()
    const { bell, rings, covers } = doorbell()
    const sync = createSessionLogSync(ctx, bell)
    sync.publish([event('run:start')], { turns: 0, runs: 1 })
    sync.publish([], { turns: 1, runs: 1 })
    sync.publish([event('tool:start'), event('question')], { turns: 2, runs: 1 })
    sync.flush() // the question's sync covered everything
    sync.publish([event('tool:start')], { turns: 3, runs: 1 })
    sync.publish([event('tool:end'), event('turn:end')], counts)
    sync.flush()
    sync.flush()
    expect(rings).toEqual([['t1~s', { turns: 0, runs: 1 }, 0], ['t1~s', { turns: 2, runs: 1 }, 0], ['t1~s', { turns: 3, runs: 1 }, IN_TURN_RING_DELAY_MS], ['t1~s', counts, 0]])
    expect(sent).toEqual([{ key: 't1~s', handler: 'sync', request: { turns: 2, runs: 1, journaled: true } }, { key: 't1~s', handler: 'sync', request: { ...counts, journaled: true } }])
    // Each journaled sync tells the doorbell what it brings, so a ring waiting for no more is dropped.
    expect(covers).toEqual([['t1~s', { turns: 2, runs: 1 }], ['t1~s', counts]])
  })

  it('journals the same syncs without a doorbell: the journal never depends on the process', () => {
    const journalOf = (bell: EventDoorbell | undefined): Sent[] => {
      const { ctx, sent } = recordingContext()
      const sync = createSessionLogSync(ctx, bell)
      sync.publish([event('run:start')], counts)
      sync.publish([event('question')], counts)
      sync.publish([event('turn:end')], counts)
      sync.flush()
      return sent
    }
    expect(journalOf(undefined)).toHaveLength(2)
    expect(journalOf(doorbell().bell)).toEqual(journalOf(undefined))
  })
})

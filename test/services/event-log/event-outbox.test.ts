import type * as restate from '@restatedev/restate-sdk'
import { describe, expect, it } from 'vitest'
import type { EventCourier } from '../../../services/event-log/event-courier'
import type { NewSessionEvent } from '../../../services/event-log/event-log-contract'
import { createEventOutbox, OUTBOX_SYNC_EVERY } from '../../../services/event-log/event-outbox'

interface Sent { key: string; handler: string; request: { source?: string; from?: number; events: NewSessionEvent[] } }

/** A context that records the one-way sends the outbox journals (the outbox uses nothing else of it). */
function recordingContext(): { ctx: restate.Context; sent: Sent[] } {
  const sent: Sent[] = []
  const client = (key: string) => new Proxy({}, { get: (_target, handler: string) => (request: Sent['request']) => { sent.push({ key, handler, request }) } })
  const ctx = { request: () => ({ id: 'inv_1' }), objectSendClient: (_service: unknown, key: string) => client(key) } as unknown as restate.Context
  return { ctx, sent }
}

function recordingCourier(): { courier: EventCourier; carried: Array<{ from: number; count: number }>; journaled: number[] } {
  const carried: Array<{ from: number; count: number }> = []
  const journaled: number[] = []
  const courier: EventCourier = {
    carry: (_key, _source, from, events) => { carried.push({ from, count: events.length }) },
    journaled: (_key, _source, upTo) => { journaled.push(upTo) },
    idle: async () => undefined,
    batches: () => carried.length,
  }
  return { courier, carried, journaled }
}

const event = (type: NewSessionEvent['type'] = 'tool:end'): NewSessionEvent => ({ type, at: 1, data: {} })

describe('event outbox', () => {
  it('with a courier, carries every event at once and journals one deliver per 64 events and at the sync', () => {
    const { ctx, sent } = recordingContext()
    const { courier, carried, journaled } = recordingCourier()
    const outbox = createEventOutbox(ctx, 't1~s', courier)
    for (let index = 0; index < OUTBOX_SYNC_EVERY + 6; index++) outbox.publish([event()])
    expect(carried).toHaveLength(OUTBOX_SYNC_EVERY + 6)
    expect(carried.at(-1)).toEqual({ from: OUTBOX_SYNC_EVERY + 5, count: 1 })
    expect(sent.map(send => [send.handler, send.request.from, send.request.events.length])).toEqual([['deliver', 0, OUTBOX_SYNC_EVERY]])
    outbox.sync()
    outbox.sync() // nothing new: no second send
    expect(sent.map(send => [send.handler, send.request.source, send.request.from, send.request.events.length])).toEqual([['deliver', 'inv_1', 0, OUTBOX_SYNC_EVERY], ['deliver', 'inv_1', OUTBOX_SYNC_EVERY, 6]])
    // Each journaled send tells the courier how far the journal carries the events.
    expect(journaled).toEqual([OUTBOX_SYNC_EVERY, OUTBOX_SYNC_EVERY + 6])
  })

  it('journals a question at once, with the events before it', () => {
    const { ctx, sent } = recordingContext()
    const outbox = createEventOutbox(ctx, 't1~s', recordingCourier().courier)
    outbox.publish([event('run:start')])
    outbox.publish([event('tool:start'), event('question')])
    expect(sent.map(send => [send.request.from, send.request.events.map(item => item.type)])).toEqual([[0, ['run:start', 'tool:start', 'question']]])
  })

  it('journals the same sends with or without a courier: the journal never depends on the process', () => {
    const journalOf = (courier: EventCourier | undefined): unknown[] => {
      const { ctx, sent } = recordingContext()
      const outbox = createEventOutbox(ctx, 't1~s', courier)
      for (let index = 0; index < OUTBOX_SYNC_EVERY + 3; index++) outbox.publish([event(index === 10 ? 'question' : 'tool:end')])
      outbox.sync()
      return sent.map(send => [send.handler, send.request.from, send.request.events.length])
    }
    // The question (index 10) takes the first 11 events; the other 56 stay under 64 until the sync.
    expect(journalOf(undefined)).toEqual([['deliver', 0, 11], ['deliver', 11, OUTBOX_SYNC_EVERY + 3 - 11]])
    expect(journalOf(recordingCourier().courier)).toEqual(journalOf(undefined))
  })

  it('per write, journals the append runs made before the outbox, unnumbered, and syncs nothing', () => {
    const { ctx, sent } = recordingContext()
    const outbox = createEventOutbox(ctx, 't1~s', recordingCourier().courier, 'per-write')
    outbox.publish([event()])
    outbox.publish([])
    outbox.sync()
    expect(sent).toEqual([{ key: 't1~s', handler: 'append', request: { events: [event()] } }])
  })
})

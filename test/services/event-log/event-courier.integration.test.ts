import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { NewSessionEvent, ReadEventsResult } from '../../../services/event-log/event-log-contract'
import { createEventCourier } from '../../../services/event-log/event-courier'
import { eventLogObject } from '../../../services/event-log/event-log-object'
import { printLogsOnFailure, startRestateHarness } from '../../helpers/restate/restate-harness'
import type { RestateHarness } from '../../helpers/restate/restate-harness'
import { startIngressGate } from '../../helpers/ingress-gate'
import type { GatedRequest, IngressGate } from '../../helpers/ingress-gate'

const events = (from: number, count: number): NewSessionEvent[] =>
  Array.from({ length: count }, (_, offset) => ({ type: 'tool:end', at: 1_000 + from + offset, data: { index: from + offset } }))

const indexes = (result: ReadEventsResult): unknown[] => result.events.map(event => event.data.index)

/** Where the batch a gated request carried starts. */
const fromOf = (request: GatedRequest): unknown => (request.body as { from?: unknown } | undefined)?.from

/**
 * Carries `first` (from 0) through a courier whose first post the gate holds, then `later` (from `laterFrom`) while
 * that post is in flight; releases the post and waits until the courier is idle.
 */
async function carryBehindHeldBatch(gate: IngressGate, logKey: string, source: string, first: NewSessionEvent[], laterFrom: number, later: NewSessionEvent[]): Promise<void> {
  const courier = createEventCourier({ ingressUrl: gate.url, windowMs: 0 })
  courier.carry(logKey, source, 0, first)
  await gate.received(1)
  courier.carry(logKey, source, laterFrom, later)
  gate.release()
  await courier.idle()
}

describe('event courier against a real Restate server', () => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => { harness = await startRestateHarness({ services: [eventLogObject] }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)
  /** Runs `body` with a gate in front of the harness's ingress, closed afterwards. */
  const withGate = async (decide: Parameters<typeof startIngressGate>[1], body: (gate: IngressGate) => Promise<void>): Promise<void> => {
    const gate = await startIngressGate(h().ingressUrl, decide)
    try {
      await body(gate)
    } finally {
      await gate.close()
    }
  }

  it('delivers what it carries in order, batching the events that follow each other within its window', async () => {
    const courier = createEventCourier({ ingressUrl: h().ingressUrl, windowMs: 500 })
    courier.carry('t1~courier', 'inv-1', 0, events(0, 1))
    await h().waitFor(async () => (await h().call<ReadEventsResult>('events/t1~courier/read', { after: 0 })).body.count === 1, 5_000, 'the first event')
    for (let index = 1; index < 20; index++) courier.carry('t1~courier', 'inv-1', index, events(index, 1))
    const log = await h().waitFor(async () => {
      const read = await h().call<ReadEventsResult>('events/t1~courier/read', { after: 0 })
      return read.body.count === 20 ? read : undefined
    }, 5_000, 'all 20 events')
    expect(indexes(log.body)).toEqual(Array.from({ length: 20 }, (_, index) => index))
    expect(log.body.events.map(event => event.seq)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1))
    // The first event leaves at once, the other 19 (carried within its window) together.
    expect(courier.batches()).toBe(2)
    await courier.idle()
  })

  it('does not post the events its outbox has journaled since it queued them', async () => {
    const courier = createEventCourier({ ingressUrl: h().ingressUrl, windowMs: 500 })
    courier.carry('t1~journaled', 'inv-1', 0, events(0, 1))
    await h().waitFor(async () => (await h().call<ReadEventsResult>('events/t1~journaled/read', { after: 0 })).body.count === 1, 5_000, 'the first event')
    courier.carry('t1~journaled', 'inv-1', 1, events(1, 4))
    courier.journaled('t1~journaled', 'inv-1', 5)
    await courier.idle()
    expect(courier.batches()).toBe(1)
    expect((await h().call<ReadEventsResult>('events/t1~journaled/read', { after: 0 })).body.count).toBe(1)
    // What it carries next still goes, from where the journal left it.
    courier.carry('t1~journaled', 'inv-1', 5, events(5, 1))
    await courier.idle()
    expect(courier.batches()).toBe(2)
  })

  it('keeps the events after a journaled range when the journal overtakes a batch in flight', async () => {
    const courier = createEventCourier({ ingressUrl: h().ingressUrl, windowMs: 200 })
    courier.carry('t1~overtaken', 'inv-1', 0, events(0, 10))
    while (courier.batches() === 0) await new Promise(resolve => setImmediate(resolve)) // the first batch is in flight
    courier.carry('t1~overtaken', 'inv-1', 10, events(10, 60))
    courier.journaled('t1~overtaken', 'inv-1', 70)
    await h().call('events/t1~overtaken/deliver', { source: 'inv-1', from: 0, events: events(0, 70), journaled: true })
    courier.carry('t1~overtaken', 'inv-1', 70, events(70, 10))
    await courier.idle()
    const log = await h().call<ReadEventsResult>('events/t1~overtaken/read', { after: 0, limit: 500 })
    expect(indexes(log.body)).toEqual(Array.from({ length: 80 }, (_, index) => index))
  })

  it('appends each event of a source once, whether a replay carries it again or the journaled send brings it too', async () => {
    const first = createEventCourier({ ingressUrl: h().ingressUrl, windowMs: 0 })
    first.carry('t1~twice', 'inv-2', 0, events(0, 3))
    await first.idle()
    // Another process replaying the same invocation carries everything again, and more.
    const second = createEventCourier({ ingressUrl: h().ingressUrl, windowMs: 0 })
    second.carry('t1~twice', 'inv-2', 0, events(0, 5))
    await second.idle()
    // The invocation's journaled send covers the whole range.
    await h().call('events/t1~twice/deliver', { source: 'inv-2', from: 0, events: events(0, 6) })
    const log = await h().call<ReadEventsResult>('events/t1~twice/read', { after: 0 })
    expect(indexes(log.body)).toEqual([0, 1, 2, 3, 4, 5])
  })

  it('appends nothing from a batch that starts past what the log holds of its source', async () => {
    const gap = await h().call<{ delivered: number }>('events/t1~gap/deliver', { source: 'inv-3', from: 2, events: events(2, 2) })
    expect(gap.body.delivered).toBe(0)
    const filled = await h().call<{ delivered: number }>('events/t1~gap/deliver', { source: 'inv-3', from: 0, events: events(0, 4) })
    expect(filled.body.delivered).toBe(4)
    const log = await h().call<ReadEventsResult>('events/t1~gap/read', { after: 0 })
    expect(indexes(log.body)).toEqual([0, 1, 2, 3])
  })

  it('keeps two sources apart: the same indexes of two invocations are both appended', async () => {
    await h().call('events/t1~two/deliver', { source: 'inv-a', from: 0, events: events(0, 2) })
    await h().call('events/t1~two/deliver', { source: 'inv-b', from: 0, events: events(10, 2) })
    const log = await h().call<ReadEventsResult>('events/t1~two/read', { after: 0 })
    expect(indexes(log.body)).toEqual([0, 1, 10, 11])
  })

  it('appends a journaled batch past the cursor (its events are certain), where a courier batch is dropped', async () => {
    await h().call('events/t1~certain/deliver', { source: 'inv-4', from: 0, events: events(0, 2) })
    const dropped = await h().call<{ delivered: number }>('events/t1~certain/deliver', { source: 'inv-4', from: 5, events: events(5, 1) })
    expect(dropped.body.delivered).toBe(2)
    const kept = await h().call<{ delivered: number }>('events/t1~certain/deliver', { source: 'inv-4', from: 5, events: events(5, 2), journaled: true })
    expect(kept.body.delivered).toBe(7)
    const log = await h().call<ReadEventsResult>('events/t1~certain/read', { after: 0 })
    expect(indexes(log.body)).toEqual([0, 1, 5, 6])
  })

  it('a replay in a fresh process posts one batch, then skips to where the log stands', async () => {
    await h().call('events/t1~replay/deliver', { source: 'inv-5', from: 0, events: events(0, 600), journaled: true })
    const courier = createEventCourier({ ingressUrl: h().ingressUrl, windowMs: 0 })
    // A replay records the invocation's 600 events again, in writes of one event, then one new event.
    for (let index = 0; index < 601; index++) courier.carry('t1~replay', 'inv-5', index, events(index, 1))
    await courier.idle()
    const log = await h().call<ReadEventsResult>('events/t1~replay/read', { after: 0, limit: 500 })
    expect(log.body.count).toBe(601)
    expect(courier.batches()).toBeLessThanOrEqual(3)
  })

  it('leaves a batch it cannot post to the journaled send after three tries, and goes on from the events after it', async () => {
    await withGate(index => (index < 3 ? 'fail' : 'forward'), async (gate) => {
      const failures: unknown[] = []
      const courier = createEventCourier({ ingressUrl: gate.url, windowMs: 0, onError: error => failures.push(error) })
      courier.carry('t1~down', 'inv-6', 0, events(0, 2))
      await courier.idle()
      expect(failures).toHaveLength(3)
      courier.carry('t1~down', 'inv-6', 2, events(2, 1))
      await courier.idle()
      // Three tries of the first batch, then the next events: the first batch is never posted again.
      expect(gate.requests.map(request => fromOf(request))).toEqual([0, 0, 0, 2])
      // The log keeps nothing past its cursor from the courier; the journaled send brings the whole range.
      expect((await h().call<ReadEventsResult>('events/t1~down/read', { after: 0 })).body.count).toBe(0)
      await h().call('events/t1~down/deliver', { source: 'inv-6', from: 0, events: events(0, 3), journaled: true })
      expect(indexes((await h().call<ReadEventsResult>('events/t1~down/read', { after: 0 })).body)).toEqual([0, 1, 2])
    })
  })

  it('gives up a batch after three refused connections too (no ingress listening), and is idle', async () => {
    const failures: unknown[] = []
    const courier = createEventCourier({ ingressUrl: 'http://127.0.0.1:1', windowMs: 0, onError: error => failures.push(error) })
    courier.carry('t1~refused', 'inv-10', 0, events(0, 2))
    await courier.idle()
    expect(failures).toHaveLength(3)
    expect(failures.every(failure => (failure as NodeJS.ErrnoException).code === 'ECONNREFUSED')).toBe(true)
  })

  it('holds at most 4,096 events of a source while its ingress hangs, and leaves the newer ones to the journaled send', async () => {
    await withGate(index => (index === 0 ? 'hold' : 'forward'), async (gate) => {
      await carryBehindHeldBatch(gate, 't1~capped', 'inv-7', events(0, 1), 1, events(1, 5_000))
      const log = await h().call<ReadEventsResult>('events/t1~capped/read', { after: 4_090, limit: 100 })
      // The lane holds 4,096 events, the one in flight included: events 0 … 4,095.
      expect(log.body.count).toBe(4_096)
      expect(indexes(log.body).at(-1)).toBe(4_095)
      await h().call('events/t1~capped/deliver', { source: 'inv-7', from: 0, events: events(0, 5_001), journaled: true })
      expect((await h().call<ReadEventsResult>('events/t1~capped/read', { after: 5_000 })).body.count).toBe(5_001)
    })
  })

  it('drops events that skip ahead of a batch in flight: the journaled send brings them, not a batch with a gap', async () => {
    await withGate(index => (index === 0 ? 'hold' : 'forward'), async (gate) => {
      await carryBehindHeldBatch(gate, 't1~skipped', 'inv-8', events(0, 2), 10, events(10, 3))
      expect(gate.requests.map(request => fromOf(request))).toEqual([0])
      expect(indexes((await h().call<ReadEventsResult>('events/t1~skipped/read', { after: 0 })).body)).toEqual([0, 1])
    })
  })

  it('sends a batch again at once on a new connection when its kept-alive connection was reset, without counting a failure', async () => {
    await withGate(index => (index === 1 ? 'reset' : 'forward'), async (gate) => {
      const failures: unknown[] = []
      const courier = createEventCourier({ ingressUrl: gate.url, windowMs: 0, onError: error => failures.push(error) })
      courier.carry('t1~stale', 'inv-9', 0, events(0, 1))
      await courier.idle()
      courier.carry('t1~stale', 'inv-9', 1, events(1, 1))
      await courier.idle()
      expect(failures).toEqual([])
      expect(gate.requests.map(request => [fromOf(request), request.action, request.reusedConnection])).toEqual([[0, 'forward', false], [1, 'reset', true], [1, 'forward', false]])
      expect(indexes((await h().call<ReadEventsResult>('events/t1~stale/read', { after: 0 })).body)).toEqual([0, 1])
    })
  })
})

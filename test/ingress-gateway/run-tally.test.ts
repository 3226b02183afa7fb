import { describe, expect, it } from 'vitest'
import type { RunRow } from '../../ingress-gateway/restate-queries'
import { ADMITTED_SEND_TTL_MS, DELIVERY_GRACE_MS, stillPending, tallyRuns, type AdmittedSend } from '../../ingress-gateway/run-tally'

const row = (sessionKey: string, handler: string, status: string, extra: Partial<RunRow> = {}): RunRow =>
  ({ id: `inv_${sessionKey}_${handler}_${status}`, service: handler === 'add' ? 'inbox' : 'session', handler, sessionKey, status, ...extra })
const send = (kind: AdmittedSend['kind'], sessionKey: string, extra: Partial<AdmittedSend> = {}): AdmittedSend =>
  ({ kind, sessionKey, idempotencyKey: `key-${sessionKey}`, admittedAtMs: 0, ...extra })

describe('tallyRuns', () => {
  it('counts every unfinished or queued run, a running deliver, and no finished one', () => {
    const tally = tallyRuns([row('t~a', 'run', 'running'), row('t~a', 'run', 'pending'), row('t~b', 'deliver', 'suspended'), row('t~c', 'run', 'completed')], [])
    expect(tally.runs).toBe(3)
    expect([tally.isBusy('t~a'), tally.isBusy('t~b'), tally.isBusy('t~c')]).toEqual([true, true, false])
  })

  it("counts a session's steering not yet run as one run, and none when the session already runs", () => {
    expect(tallyRuns([row('t~a', 'add', 'ready'), row('t~a', 'add', 'backing-off')], [send('steering', 't~a')]).runs).toBe(1)
    expect(tallyRuns([row('t~a', 'run', 'running'), row('t~a', 'add', 'ready'), row('t~a', 'deliver', 'pending')], [send('steering', 't~a')]).runs).toBe(1)
  })

  it('counts sends Restate does not show yet, and everything past the cap when the read was cut short', () => {
    expect(tallyRuns([row('t~a', 'run', 'running')], [send('run', 't~a'), send('run', 't~b')]).runs).toBe(3)
    expect(tallyRuns([], [], true).runs).toBe(Number.POSITIVE_INFINITY)
  })
})

describe('stillPending', () => {
  it('keeps a prompt until its run shows, in any status', () => {
    const prompt = send('run', 't~a')
    expect(stillPending([prompt], [row('t~a', 'run', 'running')], 1)).toEqual([prompt])
    expect(stillPending([prompt], [row('t~a', 'run', 'completed', { idempotencyKey: 'key-t~a' })], 1)).toEqual([])
  })

  it('keeps a message until the deliver its add sent shows, or a grace after the add completed without one', () => {
    const message = send('steering', 't~a', { invocationId: 'inv_add' })
    const added = row('t~a', 'add', 'completed', { id: 'inv_add', idempotencyKey: 'key-t~a' })
    expect(stillPending([message], [added, row('t~a', 'deliver', 'completed', { invokedById: 'inv_add' })], 1)).toEqual([])
    expect(stillPending([message], [added], 1_000)).toEqual([message])
    expect(stillPending([message], [added], 1_000 + DELIVERY_GRACE_MS)).toEqual([])
  })

  it('keeps everything while the admin API does not answer, up to the time to live', () => {
    const prompt = send('run', 't~a')
    expect(stillPending([prompt], undefined, ADMITTED_SEND_TTL_MS - 1)).toEqual([prompt])
    expect(stillPending([prompt], undefined, ADMITTED_SEND_TTL_MS)).toEqual([])
  })
})

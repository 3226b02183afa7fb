import { describe, expect, it } from 'vitest'
import type { ReadEventsResult } from '../../../contract/event-log'
import { createRunTimeline } from '../../../ingress-gateway/protocols/create-run-timeline'
import type { RestateIngress } from '../../../ingress-gateway/restate-ingress'
import { SessionFeeds, type EventLogSource } from '../../../ingress-gateway/session-feeds'
import { fakeLive } from '../helpers/fake-live'

describe('the run timeline', () => {
  it('a follower that leaves while its catch-up read is in flight leaves no live subscription behind', async () => {
    let answerRead: (result: ReadEventsResult) => void = () => undefined
    const source: EventLogSource = {
      read: async () => new Promise<ReadEventsResult>(resolve => { answerRead = resolve }),
      watch: async (_key, _after, _timeoutMs, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error))),
    }
    const live = fakeLive()
    const timeline = createRunTimeline({ ingress: {} as RestateIngress, live, eventLog: { source, feeds: new SessionFeeds(source, 60_000) }, config: { publicUrl: 'http://gateway.test', answerSecret: 'secret' } })
    const client = new AbortController()
    const items = timeline.follow('t~s', { after: 0, signal: client.signal })[Symbol.asyncIterator]()
    const first = items.next()
    await new Promise(resolve => setImmediate(resolve))
    client.abort()
    answerRead({ events: [], count: 0 })
    await first
    await items.return?.(undefined)
    await new Promise(resolve => setImmediate(resolve))
    expect(live.subscribers()).toBe(0)
  })

  it('an event the assembler cannot read ends the follow instead of rejecting unhandled (which would end the process)', async () => {
    const malformed = { seq: 1, type: 'run:start', at: 1, data: null } as unknown as ReadEventsResult['events'][number]
    const source: EventLogSource = {
      read: async () => ({ events: [malformed], count: 1 }),
      watch: async (_key, _after, _timeoutMs, signal) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error))),
    }
    const timeline = createRunTimeline({ ingress: {} as RestateIngress, live: fakeLive(), eventLog: { source, feeds: new SessionFeeds(source, 60_000) }, config: { publicUrl: 'http://gateway.test', answerSecret: 'secret' } })
    const unhandled: unknown[] = []
    const onUnhandled = (reason: unknown): void => { unhandled.push(reason) }
    process.on('unhandledRejection', onUnhandled)
    try {
      const seen: string[] = []
      for await (const item of timeline.follow('t~s', { after: 0, signal: AbortSignal.timeout(2_000) })) seen.push(item.type)
      await new Promise(resolve => setImmediate(resolve))
      expect(unhandled).toEqual([])
    } finally {
      process.off('unhandledRejection', onUnhandled)
    }
  })
})

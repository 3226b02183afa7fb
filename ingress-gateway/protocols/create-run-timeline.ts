import { EventEmitter, once } from 'node:events'
import { eventLogInterface } from '../../contract/interfaces'
import { answerUrl } from '../answer-token'
import type { GatewayConfig } from '../config'
import { GatewayError, RestateCallError } from '../errors'
import { followEventLog } from '../event-log-follow'
import type { LiveDeltas } from '../live-deltas'
import { restateCall, type RestateIngress } from '../restate-ingress'
import type { EventLogSource, SessionFeeds } from '../session-feeds'
import { ItemQueue } from './item-queue'
import { pollPending } from './pending-poll'
import type { FollowOptions, RunPosition, RunTimeline } from './run-timeline'
import { TimelineAssembler } from './timeline-assembler'
import type { TimelineItem } from './timeline-items'

/** Items a follower may hold unread before the durable log waits for it (live deltas never wait: the writers cut off). */
const QUEUE_HIGH_WATER = 1_000
/** Events read per page when looking back for a session's latest run. */
const LOOK_BACK_PAGE = 500

/** What the timeline reads: the event logs (and their shared feeds), the live deltas, the pending lists, answer links. */
export interface RunTimelineDependencies {
  ingress: RestateIngress
  live: LiveDeltas
  eventLog: { source: EventLogSource; feeds: SessionFeeds }
  config: Pick<GatewayConfig, 'publicUrl' | 'answerSecret'>
}

/** Builds the gateway's {@link RunTimeline}: one per gateway, sharing the event-log feeds with the events route. */
export function createRunTimeline(dependencies: RunTimelineDependencies): RunTimeline {
  const { source } = dependencies.eventLog
  return {
    follow: (key, options) => follow(dependencies, key, options),
    eventCount: async key => (await source.read(key, Number.MAX_SAFE_INTEGER, 1)).count,
    latestRun: key => latestRun(dependencies.ingress, source, key),
  }
}

/** Feeds the durable log, then the live deltas and the pending list, into one assembler; yields its items in order. */
async function* follow(dependencies: RunTimelineDependencies, key: string, options: FollowOptions): AsyncGenerator<TimelineItem> {
  const { ingress, live, eventLog, config } = dependencies
  const stop = new AbortController()
  const signal = AbortSignal.any([options.signal, stop.signal])
  const assembler = new TimelineAssembler(id => answerUrl(config.publicUrl, config.answerSecret, id))
  const queue = new ItemQueue<TimelineItem>(QUEUE_HIGH_WATER)
  const moved = new EventEmitter().setMaxListeners(0)
  const reportError = (error: unknown): void => queue.push([{ type: 'source-error', code: error instanceof GatewayError ? error.code : 'restate_error', message: error instanceof Error ? error.message : String(error) }])
  // A producer that fails unexpectedly ends the follow (the client resumes) rather than rejecting unhandled.
  const fail = (error: unknown): void => {
    reportError(error)
    stop.abort()
  }
  let unsubscribe = (): void => undefined
  const durable = (async () => {
    for await (const step of followEventLog(eventLog.feeds, eventLog.source, key, options.after, signal, reportError)) {
      if (step.kind === 'caught-up') {
        unsubscribe = live.subscribeLive(key, event => queue.push(assembler.live(event)))
        continue
      }
      for (const event of step.events) queue.push(assembler.durable(event))
      queue.push(assembler.endOfBatch())
      moved.emit('moved')
      await queue.roomFor(signal)
    }
  })().catch(fail)
  const changed = async (): Promise<void> => { await once(moved, 'moved', { signal }).catch(() => undefined) }
  const pending = pollPending(ingress, key, () => assembler.awaitsCalls(), questions => queue.push(assembler.pending(questions)), changed, signal).catch(fail)
  try {
    yield* queue.drain(signal)
  } finally {
    stop.abort()
    await Promise.allSettled([durable, pending])
    // After the durable feed ended: one that catches up while it ends (a read in flight) subscribes only then.
    unsubscribe()
  }
}

/** The session's latest top-level run: one read of where the log keeps it, else (an older log) looked for. */
async function latestRun(ingress: RestateIngress, source: EventLogSource, key: string): Promise<RunPosition | undefined> {
  // Services of a release before the handler answer 404: the log is looked through as then.
  const kept = await restateCall(() => ingress.client.client(eventLogInterface, key).latestRun()).catch((error: unknown) => {
    if (error instanceof RestateCallError && error.status === 404) return null
    throw error
  })
  return kept ?? lookBackForLatestRun(source, key)
}

/** The session's latest top-level run, found by reading its log backwards a page at a time from the end. */
async function lookBackForLatestRun(source: EventLogSource, key: string): Promise<RunPosition | undefined> {
  const { count } = await source.read(key, Number.MAX_SAFE_INTEGER, 1)
  let ended = new Set<string>()
  for (let after = Math.max(0, count - LOOK_BACK_PAGE); ; after = Math.max(0, after - LOOK_BACK_PAGE)) {
    const { events } = await source.read(key, after, LOOK_BACK_PAGE)
    const topLevel = events.filter(event => event.data.label === undefined)
    ended = new Set([...ended, ...topLevel.filter(event => event.type === 'run:end').map(event => String(event.data.runId))])
    const start = topLevel.filter(event => event.type === 'run:start').at(-1)
    if (start !== undefined) return { runId: String(start.data.runId), startSeq: start.seq, ended: ended.has(String(start.data.runId)) }
    if (after === 0) return undefined
  }
}

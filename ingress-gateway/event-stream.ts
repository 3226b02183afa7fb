import type { ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { SessionEvent } from '../contract/session'
import type { EventLogSource, SessionFeed, SessionFeeds } from './session-feeds'
import { GatewayError } from './errors'
import { writeOrCutOff } from './bounded-write'

/** Timing of a live event stream. */
export interface EventStreamTiming {
  keepAliveMs: number
  pageSize: number
  /** Longest wait between reads while Restate is failing. */
  maxBackoffMs: number
  /** First wait after a failed read (doubling up to `maxBackoffMs`). */
  retryMs: number
}

/** Defaults: a keep-alive comment every 15 s, 100 events a page. */
export const DEFAULT_EVENT_STREAM_TIMING: EventStreamTiming = { keepAliveMs: 15_000, pageSize: 100, maxBackoffMs: 5_000, retryMs: 300 }

/** One Server-Sent Events frame for a session event: `id` is its `seq`, so a reconnect resumes after it. */
export function formatEvent(event: SessionEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
}

/** The headers of an event stream (also what `HEAD` answers). */
export const EVENT_STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
  // A stream's socket is never worth reusing, and an idle kept-alive one would delay shutdown.
  connection: 'close',
} as const

/**
 * Streams the event log of session `key` to `raw` as SSE, starting after `after`, until `signal` aborts (the client
 * left). A viewer behind the log reads its own pages; a viewer at the end waits on the session's shared feed, which
 * costs nothing while the session is idle. While Restate fails the stream stays open: one `gateway:error` event per
 * outage, then retries with backoff.
 */
export async function streamEvents(
  raw: ServerResponse,
  feeds: SessionFeeds,
  source: Pick<EventLogSource, 'read'>,
  key: string,
  after: number,
  signal: AbortSignal,
  timing: EventStreamTiming = DEFAULT_EVENT_STREAM_TIMING,
  /** Called once, when the viewer has every durable event it missed: the moment to start its live deltas. */
  onCaughtUp?: () => void,
): Promise<void> {
  raw.writeHead(200, EVENT_STREAM_HEADERS)
  raw.write('retry: 2000\n\n')
  // A viewer that reads nothing is cut off by its unsent bytes, not buffered for (durable frames wait for `drain`).
  const keepAlive = setInterval(() => writeOrCutOff(raw, ': keep-alive\n\n'), timing.keepAliveMs)
  let reported = false
  const report = (error: unknown): void => {
    if (reported) return
    reported = true
    raw.write(errorFrame(error))
  }
  const { feed, leave } = feeds.join(key, { onError: report })
  let cursor = after
  let failures = 0
  let caughtUp = false
  try {
    while (!signal.aborted) {
      let page: SessionEvent[]
      try {
        page = await nextPage(feed, source, key, cursor, timing.pageSize)
        failures = 0
        reported = false
      } catch (error) {
        report(error)
        await pause(Math.min(timing.retryMs * 2 ** failures++, timing.maxBackoffMs), signal)
        continue
      }
      for (const event of page) {
        if (event.seq <= cursor) continue
        if (!raw.write(formatEvent(event))) await drained(raw, signal)
        cursor = event.seq
      }
      if (page.length >= timing.pageSize) continue
      if (!caughtUp) {
        caughtUp = true
        onCaughtUp?.()
      }
      await feed.waitBeyond(cursor, signal)
    }
  } finally {
    leave()
    clearInterval(keepAlive)
    raw.end()
  }
}

/** The events after `cursor`: from the feed's buffer when it reaches back that far, else read from Restate. */
async function nextPage(feed: SessionFeed, source: Pick<EventLogSource, 'read'>, key: string, cursor: number, limit: number): Promise<SessionEvent[]> {
  const buffered = feed.eventsAfter(cursor, limit)
  if (buffered && (buffered.length > 0 || feed.latest <= cursor)) return buffered
  const result = await source.read(key, cursor, limit)
  feed.observe(result)
  return result.events
}

function errorFrame(error: unknown): string {
  const code = error instanceof GatewayError ? error.code : 'restate_error'
  const message = error instanceof Error ? error.message : String(error)
  return `event: gateway:error\ndata: ${JSON.stringify({ code, message })}\n\n`
}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch(() => undefined)
}

async function drained(raw: ServerResponse, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return
  await new Promise<void>((resolve) => {
    const done = (): void => {
      raw.off('drain', done)
      signal.removeEventListener('abort', done)
      resolve()
    }
    raw.once('drain', done)
    signal.addEventListener('abort', done, { once: true })
  })
}

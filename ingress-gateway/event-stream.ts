import { once } from 'node:events'
import type { ServerResponse } from 'node:http'
import { writeOrCutOff } from './bounded-write'
import { GatewayError } from './errors'
import { followEventLog } from './event-log-follow'
import type { EventLogSource, SessionFeeds } from './session-feeds'

const KEEP_ALIVE_MS = 15_000

/** The headers of an event stream (also what `HEAD` answers). */
export const EVENT_STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
  // A stream's socket is never worth reusing, and an idle kept-alive one would delay shutdown.
  connection: 'close',
} as const

/**
 * Streams the event log of session `key` to `raw` as SSE after `after`, until `signal` aborts (the client left). A
 * viewer behind reads its own pages; one at the end waits on the session's shared feed. While Restate fails the stream
 * stays open: one `gateway:error` event per outage, then retries with backoff. `onCaughtUp` is called once the viewer
 * has every durable event it missed: the moment to start its live deltas.
 */
export async function streamEvents(raw: ServerResponse, feeds: SessionFeeds, source: EventLogSource, key: string, after: number, signal: AbortSignal, onCaughtUp: () => void): Promise<void> {
  raw.writeHead(200, EVENT_STREAM_HEADERS)
  raw.write('retry: 2000\n\n')
  // A viewer that reads nothing is cut off by its unsent bytes, not buffered for (durable frames wait for `drain`).
  const keepAlive = setInterval(() => writeOrCutOff(raw, ': keep-alive\n\n'), KEEP_ALIVE_MS)
  const report = (error: unknown): void => {
    const code = error instanceof GatewayError ? error.code : 'restate_error'
    raw.write(`event: gateway:error\ndata: ${JSON.stringify({ code, message: error instanceof Error ? error.message : String(error) })}\n\n`)
  }
  try {
    for await (const step of followEventLog(feeds, source, key, after, signal, report)) {
      if (step.kind === 'caught-up') {
        onCaughtUp()
        continue
      }
      for (const event of step.events) {
        if (!raw.write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`)) await once(raw, 'drain', { signal }).catch(() => undefined)
      }
    }
  } finally {
    clearInterval(keepAlive)
    raw.end()
  }
}

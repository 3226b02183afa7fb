import type { ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { SessionEvent } from '../services/contract'
import { GatewayError } from './errors'

/** Timing of a live event stream. */
export interface EventStreamTiming {
  pollIntervalMs: number
  keepAliveMs: number
  pageSize: number
  /** Longest wait between polls while Restate is failing. */
  maxBackoffMs: number
}

/** Defaults: poll every 300 ms, a keep-alive comment every 15 s, 100 events a page. */
export const DEFAULT_EVENT_STREAM_TIMING: EventStreamTiming = { pollIntervalMs: 300, keepAliveMs: 15_000, pageSize: 100, maxBackoffMs: 5_000 }

/** One Server-Sent Events frame for a session event: `id` is its `seq`, so a reconnect resumes after it. */
export function formatEvent(event: SessionEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`
}

/**
 * Streams the session's event log to `raw` as SSE, starting after `after`, until `signal` aborts (the client left).
 * While Restate fails the stream stays open: one `gateway:error` event per outage, then polls with backoff.
 */
export async function streamEvents(
  raw: ServerResponse,
  fetchPage: (after: number, limit: number) => Promise<SessionEvent[]>,
  after: number,
  signal: AbortSignal,
  timing: EventStreamTiming = DEFAULT_EVENT_STREAM_TIMING,
): Promise<void> {
  // `connection: close`: a stream's socket is never worth reusing, and an idle kept-alive one would delay shutdown.
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    'x-accel-buffering': 'no',
    connection: 'close',
  })
  raw.write('retry: 2000\n\n')
  const keepAlive = setInterval(() => raw.write(': keep-alive\n\n'), timing.keepAliveMs)
  let cursor = after
  let failures = 0
  try {
    while (!signal.aborted) {
      let page: SessionEvent[]
      try {
        page = await fetchPage(cursor, timing.pageSize)
        failures = 0
      } catch (error) {
        if (failures++ === 0) raw.write(errorFrame(error))
        await pause(Math.min(timing.pollIntervalMs * 2 ** failures, timing.maxBackoffMs), signal)
        continue
      }
      for (const event of page) {
        if (event.seq <= cursor) continue
        if (!raw.write(formatEvent(event))) await drained(raw, signal)
        cursor = event.seq
      }
      if (page.length < timing.pageSize) await pause(timing.pollIntervalMs, signal)
    }
  } finally {
    clearInterval(keepAlive)
    raw.end()
  }
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

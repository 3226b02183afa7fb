import type { LiveDeltas, LiveEvent } from './live-deltas'
import { MAX_VIEWER_BUFFER_BYTES, writeOrCutOff } from './bounded-write'
import type { BoundedSink } from './bounded-write'

/**
 * One SSE frame for a live event, in the durable events' envelope (`{ type, data }`) without their `seq` and `at`.
 * No `id:` line: deltas are not in the durable log, so a browser's `Last-Event-ID` stays the last durable event's
 * `seq`, and a reconnect resumes the durable log there (then gets the attempt in progress from its start).
 */
export function formatLiveEvent(event: LiveEvent): string {
  return `event: ${event.type}\ndata: ${JSON.stringify({ type: event.type, data: event.data })}\n\n`
}

/**
 * Writes `sessionKey`'s live events to `sink` as SSE frames, from the attempts in progress (from their start) on,
 * until `signal` aborts. Call it once the durable events the viewer missed are written, so they come first. Deltas
 * do not wait for a slow viewer: one that would hold more than `maxBytes` unsent is cut off (see {@link writeOrCutOff}).
 */
export function streamLiveEvents(sink: BoundedSink, live: LiveDeltas, sessionKey: string, signal: AbortSignal, maxBytes: number = MAX_VIEWER_BUFFER_BYTES): void {
  if (signal.aborted) return
  const unsubscribe = live.subscribeLive(sessionKey, event => { if (!signal.aborted) writeOrCutOff(sink, formatLiveEvent(event), maxBytes) })
  signal.addEventListener('abort', unsubscribe, { once: true })
}

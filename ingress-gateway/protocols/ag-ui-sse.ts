import { once } from 'node:events'
import type { ServerResponse } from 'node:http'
import { writeOrCutOff } from '../bounded-write'
import type { AgUiEvent, AgUiMapping } from './ag-ui-events'
import type { TimelineItem } from './timeline-items'

/** The headers of an AG-UI event stream: SSE, as `@ag-ui/client`'s `HttpAgent` reads it (any type but its protobuf one). */
export const AG_UI_STREAM_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' } as const

const KEEP_ALIVE_MS = 15_000
/**
 * Longest a stream waits for its client to drain before cutting it off: the live deltas that arrive meanwhile queue up
 * in the timeline (only the durable log waits), so a client that stops reading must not be waited for long.
 */
export const AG_UI_DRAIN_TIMEOUT_MS = 10_000

/** One SSE frame of an event: `data: <json>` and a blank line (what `@ag-ui/encoder` writes). */
export function formatAgUiEvent(event: AgUiEvent): string {
  return `data: ${JSON.stringify(event)}\n\n`
}

/**
 * Writes `opening` (`RUN_STARTED`, the snapshot, …), then the events `mapping` makes of `items`, to `raw` (headers
 * sent) until the AG-UI run ends, the items end or `signal` aborts; then ends the response. A frame waits for `drain`
 * while the client reads slowly (at most {@link AG_UI_DRAIN_TIMEOUT_MS}), and a client holding more than `bounded-write`'s limit unsent is
 * cut off instead of buffered for. Returns whether the AG-UI run was sent whole.
 */
export async function pipeAgUiEvents(raw: ServerResponse, opening: AgUiEvent[], items: AsyncIterable<TimelineItem>, mapping: AgUiMapping, signal: AbortSignal): Promise<boolean> {
  const keepAlive = setInterval(() => writeOrCutOff(raw, ': keep-alive\n\n'), KEEP_ALIVE_MS)
  try {
    if (!(await send(raw, opening, signal))) return false
    if (mapping.finished) return true
    for await (const item of items) {
      if (!(await send(raw, mapping.map(item), signal))) return false
      if (mapping.finished) return true
    }
    return false
  } finally {
    clearInterval(keepAlive)
    raw.end()
  }
}

/** Writes `events`, then waits while the client's buffer is over its high-water mark; false when the client is gone or cut off. */
async function send(raw: ServerResponse, events: AgUiEvent[], signal: AbortSignal): Promise<boolean> {
  let full = false
  for (const event of events) {
    if (!writeOrCutOff(raw, formatAgUiEvent(event))) return false
    full = raw.writableNeedDrain
  }
  if (full) {
    const drained = await once(raw, 'drain', { signal: AbortSignal.any([signal, AbortSignal.timeout(AG_UI_DRAIN_TIMEOUT_MS)]) }).then(() => true, () => false)
    if (!drained && !signal.aborted) raw.destroy()
  }
  return !raw.destroyed && !signal.aborted
}

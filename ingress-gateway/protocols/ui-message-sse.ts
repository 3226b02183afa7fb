import { once } from 'node:events'
import type { ServerResponse } from 'node:http'
import type { UIMessageChunk } from 'ai'
import { writeOrCutOff } from '../bounded-write'
import { EVENT_STREAM_HEADERS } from '../event-stream'
import type { RunStartItem, TimelineItem } from './timeline-items'
import { carriesSteering, UiMessageStreamMapper, type UiMessageStreamOptions } from './ui-message-stream'

/** The headers of an AI SDK UI message stream (SSE, protocol v1). */
export const UI_MESSAGE_STREAM_HEADERS = { ...EVENT_STREAM_HEADERS, 'x-vercel-ai-ui-message-stream': 'v1' } as const

const KEEP_ALIVE_MS = 15_000
/** Longest a stream waits for its client to drain before cutting it off (as the AG-UI stream's). */
const DRAIN_TIMEOUT_MS = 10_000

/** One SSE frame of a chunk: `data: <json>` and a blank line. */
export function formatChunk(chunk: UIMessageChunk): string {
  return `data: ${JSON.stringify(chunk)}\n\n`
}

/** The frame that ends a UI message stream. */
export const DONE_FRAME = 'data: [DONE]\n\n'

/**
 * Which run a stream shows: a known one, or (no `runId`) the first run that starts among the items, for a prompt
 * whose run id is not known when its stream opens. The message id is the run id unless given.
 */
export type UiStreamTarget = Omit<UiMessageStreamOptions, 'runId' | 'messageId' | 'resumeAt'> & {
  runId?: string | undefined
  messageId?: string
  resumeAt?: UiMessageStreamOptions['resumeAt'] | undefined
  /** Unbound: wait for the run whose prompt carries this steering message (the run it was steered into had ended). */
  steeredPrompt?: string | undefined
}

/**
 * Writes the UI message stream of `target` from `items` to `raw` (headers already sent) until the run's stream ends
 * (`finish`/`abort`, then `[DONE]`), `items` end, or `signal` aborts (the client left: the run goes on). A frame
 * waits for `drain` while the client reads slowly (at most 10 s, then it is cut off), and a client holding more than 1 MiB (`MAX_VIEWER_BUFFER_BYTES`)
 * unsent (keep-alives included) is cut off instead of buffered for. Returns whether the run's stream was complete.
 */
export async function pipeUiMessageStream(raw: ServerResponse, items: AsyncIterable<TimelineItem>, initialTarget: UiStreamTarget, signal: AbortSignal): Promise<boolean> {
  let target = initialTarget
  const keepAlive = setInterval(() => writeOrCutOff(raw, ': keep-alive\n\n'), KEEP_ALIVE_MS)
  let mapper = target.runId === undefined ? undefined : mapperFor(target.runId, target)
  try {
    if (mapper !== undefined && !(await send(raw, mapper.start(), signal))) return false
    for await (const item of items) {
      if (mapper === undefined && item.type === 'run-start' && startsTarget(item, target)) mapper = mapperFor(item.runId, target)
      if (mapper === undefined) continue
      if (!(await send(raw, mapper.map(item), signal))) return false
      if (mapper.missedResumePoint) {
        // The run ended before it took the steering message: the message is the prompt of the next run.
        target = { ...target, runId: undefined, resumeAt: undefined, steeredPrompt: steerTextOf(target) }
        mapper = undefined
        continue
      }
      if (mapper.ended) return writeOrCutOff(raw, DONE_FRAME)
    }
    return false
  } finally {
    clearInterval(keepAlive)
    raw.end()
  }
}

function mapperFor(runId: string, { steeredPrompt: _steered, runId: _runId, messageId, ...options }: UiStreamTarget): UiMessageStreamMapper {
  return new UiMessageStreamMapper({ ...options, runId, messageId: messageId ?? runId })
}

/** Whether a run that starts is the one an unbound target waits for (any, or the one its steering message started). */
function startsTarget(item: RunStartItem, target: UiStreamTarget): boolean {
  return target.steeredPrompt === undefined || carriesSteering(item.prompt, target.steeredPrompt)
}

function steerTextOf(target: UiStreamTarget): string | undefined {
  return target.resumeAt !== undefined && 'steerText' in target.resumeAt ? target.resumeAt.steerText : undefined
}

/** Writes `chunks`, then waits while the client's buffer is full; false when the client is gone or was cut off. */
async function send(raw: ServerResponse, chunks: UIMessageChunk[], signal: AbortSignal): Promise<boolean> {
  for (const chunk of chunks) {
    if (!writeOrCutOff(raw, formatChunk(chunk))) return false
  }
  if (raw.writableNeedDrain && !(await drained(raw, signal)) && !signal.aborted) raw.destroy()
  return !signal.aborted && !raw.destroyed
}

/**
 * Whether `raw` drained within {@link DRAIN_TIMEOUT_MS}: the live deltas that arrive meanwhile queue up in the timeline
 * (only the durable log waits), so a client that stops reading must not be waited for long.
 */
async function drained(raw: ServerResponse, signal: AbortSignal): Promise<boolean> {
  const timeout = new AbortController()
  const timer = setTimeout(() => timeout.abort(), DRAIN_TIMEOUT_MS)
  try {
    return await once(raw, 'drain', { signal: AbortSignal.any([signal, timeout.signal]) }).then(() => true, () => false)
  } finally {
    clearTimeout(timer)
  }
}

import { APIError } from '@anthropic-ai/sdk'
import { Stream } from '@anthropic-ai/sdk/core/streaming'
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages'
import type { ErrorType } from '@anthropic-ai/sdk/resources/shared'

function errorTypeOf(body: unknown): ErrorType | undefined {
  if (body === null || typeof body !== 'object') return undefined
  const error = (body as { error?: { type?: unknown } }).error
  return typeof error?.type === 'string' ? error.type as ErrorType : undefined
}

function parseErrorBody(data: string): object | undefined {
  try {
    const value: unknown = JSON.parse(data)
    return value !== null && typeof value === 'object' ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * The parsed events of an SSE response, read with the SDK's own SSE parser. Unlike the SDK's `Stream` it reports
 * every event, `ping` included, to `onActivity` (for the idle watchdog); like it, it throws an `APIError` without a
 * status on `event: error` and skips events without a name or data.
 */
export async function* readWireEvents(response: Response, controller: AbortController, onActivity: () => void): AsyncGenerator<RawMessageStreamEvent> {
  for await (const sse of Stream.rawEvents(response, controller)) {
    onActivity()
    if (sse.event === null || sse.event === 'ping' || sse.data === '') continue
    if (sse.event === 'error') {
      const body = parseErrorBody(sse.data)
      throw new APIError(undefined, body ?? { error: { type: 'api_error', message: sse.data } }, undefined, response.headers, errorTypeOf(body) ?? null)
    }
    yield JSON.parse(sse.data) as RawMessageStreamEvent
  }
}

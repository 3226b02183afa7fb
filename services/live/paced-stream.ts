import type { ServerResponse } from 'node:http'

/** Past this many unsent bytes (Node's buffer and the lines waiting behind a replay), a reader is cut off. */
export const MAX_LIVE_BUFFER_BYTES = 1024 * 1024

/** What {@link pacedStream} returns: where the lines go, and how far behind the reader is. */
export interface PacedStream {
  /** Queues a line that the hub already holds (the replay of an attempt): written as fast as the reader reads, never counted. */
  replay(line: () => string): void
  /** Writes a live line after the replay; cuts the reader off instead when its unsent bytes would pass the bound. */
  send(line: string): void
  /** The bytes written or queued and not yet sent (Node's buffer plus the live lines waiting behind the replay). */
  unsentBytes(): number
}

/**
 * Writes NDJSON lines to `response` with backpressure: the replay is written only while `write()` returns true (it is
 * already in the hub's memory, so waiting costs nothing), live lines queue behind it, and a reader whose unsent bytes
 * would pass `maxBytes` is cut off (the response destroyed) rather than buffered for: it reconnects and gets the replay.
 */
export function pacedStream(response: ServerResponse, maxBytes: number = MAX_LIVE_BUFFER_BYTES): PacedStream {
  const replayLines: Array<() => string> = []
  const waiting: string[] = []
  let waitingBytes = 0
  let pumping = false
  const pump = (): void => {
    while (replayLines.length > 0 && !response.destroyed) if (!response.write(replayLines.shift()!())) return void response.once('drain', pump)
    pumping = false
    for (const line of waiting.splice(0)) response.write(line)
    waitingBytes = 0
  }
  const stream: PacedStream = {
    replay(line) {
      replayLines.push(line)
      if (pumping) return
      pumping = true
      queueMicrotask(pump)
    },
    send(line) {
      if (response.destroyed) return
      const bytes = Buffer.byteLength(line)
      if (stream.unsentBytes() + bytes > maxBytes) return void response.destroy()
      if (!pumping) return void response.write(line)
      waiting.push(line)
      waitingBytes += bytes
    },
    unsentBytes: () => response.writableLength + waitingBytes,
  }
  return stream
}

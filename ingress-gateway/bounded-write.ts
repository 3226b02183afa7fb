/**
 * Most bytes a viewer's stream may hold unsent (Node's buffer, its socket's included) before it is cut off: 1 MiB.
 * A stream cut off ends; its viewer reconnects with `Last-Event-ID` and loses no durable event.
 */
export const MAX_VIEWER_BUFFER_BYTES = 1024 * 1024

/** Where a stream's frames go: an SSE response (`writableLength` counts its socket's unsent bytes too). */
export interface BoundedSink {
  readonly writableLength: number
  readonly destroyed: boolean
  write(chunk: string): boolean
  destroy(): void
}

/**
 * Writes `chunk` unless that would leave more than `maxBytes` unsent: then cuts the viewer off (destroys the stream,
 * freeing what it held) instead of buffering for a reader that does not read. Returns whether the chunk was written.
 */
export function writeOrCutOff(sink: BoundedSink, chunk: string, maxBytes: number = MAX_VIEWER_BUFFER_BYTES): boolean {
  if (sink.destroyed) return false
  if (sink.writableLength + Buffer.byteLength(chunk) > maxBytes) {
    sink.destroy()
    return false
  }
  sink.write(chunk)
  return true
}

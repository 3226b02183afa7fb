import type { FastifyReply } from 'fastify'

/** A watch on the client of one request, from {@link watchClient}. */
export interface ClientWatch {
  /** Aborts once the client disconnected before its response finished. */
  signal: AbortSignal
  /** Stops watching (removes the listener). */
  dispose(): void
}

/**
 * Watches the client of `reply` for a disconnection. Call it before the handler's first `await`: the response emits
 * `close` once, so a listener attached after an await misses a client that left during it.
 */
export function watchClient(reply: FastifyReply): ClientWatch {
  const raw = reply.raw
  const left = new AbortController()
  const onClose = (): void => {
    if (!raw.writableFinished) left.abort()
  }
  raw.once('close', onClose)
  // The client may have left before the handler ran (during auth or the body).
  if (raw.destroyed) onClose()
  return { signal: left.signal, dispose: () => raw.off('close', onClose) }
}

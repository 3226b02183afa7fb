import type { FastifyReply } from 'fastify'

/**
 * Watches the client of `reply`: `signal` aborts once it disconnected before its response finished; `dispose` stops
 * watching. Call it before the handler's first `await`: `close` is emitted once, and a later listener would miss it.
 */
export function watchClient(reply: FastifyReply): { signal: AbortSignal; dispose(): void } {
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

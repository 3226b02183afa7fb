import type { Server } from 'node:http'
import type { Socket } from 'node:net'
import { afterEach } from 'vitest'

/**
 * The server and raw client sockets of a backpressure test, destroyed and closed after each test: register the
 * server with `serve` and each socket with `track`.
 */
export function useRawSockets(): { serve(server: Server): Server; track(socket: Socket): Socket } {
  let server: Server | undefined
  const sockets: Socket[] = []
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy()
    server?.closeAllConnections()
    await new Promise(resolve => server?.close(resolve))
    server = undefined
  })
  return {
    serve: next => (server = next),
    track: socket => { sockets.push(socket); return socket },
  }
}

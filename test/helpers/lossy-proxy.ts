import { once } from 'node:events'
import { createServer, connect } from 'node:net'
import type { AddressInfo, Socket } from 'node:net'

/** A TCP proxy in front of the services (see {@link startLossyProxy}). */
export interface LossyProxy {
  /** `http://127.0.0.1:<port>`: register this as the deployment's address. */
  url: string
  close(): Promise<void>
}

/**
 * A TCP proxy that plays a slow network that loses what is in flight: bytes from the target back to the client
 * (services → Restate) arrive `delayMs` late, and when the target's side of a connection closes (its process was
 * killed) the client's side is reset at once and every byte still on its way is dropped, as a kernel drops a dead
 * socket's unsent data. Bytes from the client to the target pass straight through.
 */
export async function startLossyProxy(targetPort: number, delayMs: number): Promise<LossyProxy> {
  const sockets = new Set<Socket>()
  const server = createServer(client => {
    const target = connect(targetPort, '127.0.0.1')
    sockets.add(client).add(target)
    const timers = new Set<NodeJS.Timeout>()
    let lost = false
    const loseEverything = (): void => {
      if (lost) return
      lost = true
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
      client.resetAndDestroy()
      target.destroy()
    }
    client.on('data', chunk => target.write(chunk))
    target.on('data', chunk => {
      const timer = setTimeout(() => { timers.delete(timer); if (!lost) client.write(chunk) }, delayMs)
      timers.add(timer)
    })
    target.on('close', loseEverything)
    target.on('error', loseEverything)
    client.on('error', loseEverything)
    client.on('close', () => { sockets.delete(client); loseEverything() })
    target.on('close', () => sockets.delete(target))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>(resolve => server.close(() => resolve()))
    },
  }
}

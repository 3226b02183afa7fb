import net from 'node:net'
import type { AddressInfo } from 'node:net'

/**
 * A round-robin TCP load balancer on loopback: each new connection goes to the next backend; a backend that refuses
 * the connection (its process is down) is skipped and the next one tried, so clients only see a failure when every
 * backend is down. Connections already open stay on their backend (HTTP/2 and keep-alive connections included).
 */
export interface TcpBalancer {
  readonly port: number
  /** Connections handed to each backend port so far. */
  counts(): Record<number, number>
  close(): Promise<void>
}

function connectTo(port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.once('connect', () => { socket.removeListener('error', reject); resolve(socket) })
    socket.once('error', reject)
  })
}

/** Connects to the first backend that accepts, starting after the previous connection's; undefined when none does. */
async function firstAccepting(backends: readonly number[], start: number): Promise<{ socket: net.Socket; port: number } | undefined> {
  for (let offset = 0; offset < backends.length; offset++) {
    const port = backends[(start + offset) % backends.length] ?? 0
    const socket = await connectTo(port).catch(() => undefined)
    if (socket) return { socket, port }
  }
  return undefined
}

/** Starts a balancer on `127.0.0.1:port` (0: a free port) in front of the backend ports. */
export async function startTcpBalancer(backends: readonly number[], port = 0): Promise<TcpBalancer> {
  let next = 0
  const counts: Record<number, number> = {}
  const open = new Set<net.Socket>()
  const server = net.createServer(client => {
    open.add(client)
    client.on('close', () => open.delete(client))
    client.on('error', () => client.destroy())
    client.pause()
    const start = next++
    void firstAccepting(backends, start).then(backend => {
      if (!backend || client.destroyed) { backend?.socket.destroy(); client.destroy(); return }
      counts[backend.port] = (counts[backend.port] ?? 0) + 1
      open.add(backend.socket)
      backend.socket.on('close', () => { open.delete(backend.socket); client.destroy() })
      backend.socket.on('error', () => backend.socket.destroy())
      client.on('close', () => backend.socket.destroy())
      client.pipe(backend.socket).pipe(client)
      client.resume()
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', resolve)
  })
  return {
    port: (server.address() as AddressInfo).port,
    counts: () => ({ ...counts }),
    close: () => new Promise(resolve => {
      for (const socket of open) socket.destroy()
      server.close(() => resolve())
    }),
  }
}

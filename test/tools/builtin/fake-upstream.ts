import { createServer } from 'node:http'
import type { Server } from 'node:http'
import { networkInterfaces } from 'node:os'

/** An HTTP server standing in for a host on the internet, and what it was asked. */
export interface FakeUpstream {
  /** Where it listens: an address of this machine that is not loopback (the egress proxy refuses loopback). */
  readonly address: string
  readonly port: number
  /** `METHOD path` of every request it answered. */
  readonly requests: string[]
  close(): Promise<void>
}

/** The first IPv4 address of this machine that is not loopback; the tests need one (any container has eth0). */
export function machineAddress(): string {
  const address = Object.values(networkInterfaces()).flat().find(entry => entry !== undefined && entry.family === 'IPv4' && !entry.internal)?.address
  if (address === undefined) throw new Error('this machine has no non-loopback IPv4 address for the fake upstream')
  return address
}

/** Starts a fake upstream on `machineAddress()` that answers `upstream <path>`. */
export async function startFakeUpstream(): Promise<FakeUpstream> {
  const requests: string[] = []
  const server: Server = createServer((request, response) => {
    requests.push(`${request.method ?? ''} ${request.url ?? ''}`)
    response.end(`upstream ${request.url ?? ''}\n`)
  })
  const address = machineAddress()
  await new Promise<void>(resolve => server.listen(0, address, resolve))
  const port = (server.address() as { port: number }).port
  return { address, port, requests, close: () => new Promise(resolve => { server.closeAllConnections(); server.close(() => resolve()) }) }
}

import net from 'node:net'
import type { StackConfig } from './stack-config'

/** Thrown before anything starts when a port of the stack is taken; the message names the variable that moves it. */
export class PortInUseError extends Error {
  constructor(readonly port: number, readonly variable: string) {
    super(`port ${port} is already in use; set ${variable}`)
    this.name = 'PortInUseError'
  }
}

/** True when nothing listens on `host:port` (we could bind it ourselves). */
export async function isPortFree(port: number, host: string): Promise<boolean> {
  return new Promise(resolve => {
    const server = net.createServer()
    server.once('error', () => resolve(false))
    server.listen(port, host, () => server.close(() => resolve(true)))
  })
}

/** Throws {@link PortInUseError} for the first taken port of the stack (the Restate server's, services', live hub's, gateway's). */
export async function checkStackPorts(config: StackConfig): Promise<void> {
  const ports: [number, string, string][] = [
    [config.gatewayPort, 'GATEWAY_PORT', config.host],
    [config.ingressPort, 'RESTATE_INGRESS_PORT', '127.0.0.1'],
    [config.adminPort, 'RESTATE_ADMIN_PORT', '127.0.0.1'],
    [config.fabricPort, 'RESTATE_FABRIC_PORT', '127.0.0.1'],
    [config.servicesPort, 'SERVICES_PORT', '127.0.0.1'],
    [config.livePort, 'ZIDANE_LIVE_PORT', '127.0.0.1'],
  ]
  for (const [port, variable, host] of ports) if (!(await isPortFree(port, host))) throw new PortInUseError(port, variable)
}

/** True when something accepts TCP connections on `host:port`. */
export async function acceptsConnections(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise(resolve => {
    const socket = net.connect(port, host)
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', () => resolve(false))
  })
}

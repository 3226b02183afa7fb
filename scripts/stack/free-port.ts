import net from 'node:net'

/** A free loopback TCP port (closed again before returning; a race with another process is possible but rare). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/** Free ports for a whole stack, as the environment variables `loadStackConfig` reads. */
export async function freeStackPortsEnv(): Promise<Record<string, string>> {
  const names = ['RESTATE_INGRESS_PORT', 'RESTATE_ADMIN_PORT', 'RESTATE_FABRIC_PORT', 'SERVICES_PORT', 'ZIDANE_LIVE_PORT', 'GATEWAY_PORT'] as const
  const env: Record<string, string> = {}
  for (const name of names) env[name] = String(await freePort())
  return env
}

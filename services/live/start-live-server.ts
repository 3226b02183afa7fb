import type { Server } from 'node:http'
import type { LiveConfig } from './live-config'
import type { LiveHub } from './live-hub'
import { createLiveServer } from './live-server'

/** Starts the hub's endpoint when a token is configured; resolves with the listening server, or undefined without a token. */
export async function startLiveServer(hub: LiveHub, config: LiveConfig): Promise<Server | undefined> {
  if (config.token === undefined) return undefined
  const server = createLiveServer(hub, { token: config.token })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(config.port, config.host, resolve)
  })
  server.unref()
  return server
}

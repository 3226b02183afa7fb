import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach } from 'vitest'
import type { LiveHub } from '../../services/live/live-hub'
import { createLiveServer } from '../../services/live/live-server'

/** The token the test hubs require. */
export const LIVE_TEST_TOKEN = 'internal-token-0123456789'

/**
 * Serves live hubs on loopback for the tests of the calling file, each closed (connections included) after its test.
 * Resolves the server and its base URL.
 */
export function liveServers(): (hub: LiveHub) => Promise<{ server: Server; url: string }> {
  const open: Server[] = []
  afterEach(async () => {
    for (const server of open.splice(0)) {
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
    }
  })
  return async (hub) => {
    const server = createLiveServer(hub, { token: LIVE_TEST_TOKEN })
    open.push(server)
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }
  }
}

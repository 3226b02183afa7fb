import type { Server } from 'node:http'
import type { LiveConfig } from './live-config'
import type { LiveHub } from './live-hub'
import { createLiveServer } from './live-server'
import { startReplicaRegistration } from './replica-registration'
import type { ReplicaRegistration } from './replica-registration'

/** A started live hub endpoint, and its registration in Restate when the ingress is known. */
export interface StartedLiveServer {
  server: Server
  registration: ReplicaRegistration | undefined
}

/**
 * Starts the hub's endpoint when a token is configured, and registers its advertised URL in the `live_replicas`
 * registry through Restate's ingress (`ingressUrl`), where the gateways find it. Without an ingress URL the hub is not
 * registered: only gateways given its URL (`ZIDANE_LIVE_URLS`) follow it. Resolves undefined without a token.
 */
export async function startLiveServer(hub: LiveHub, config: LiveConfig, ingressUrl?: string, log: (line: string) => void = line => console.log(line)): Promise<StartedLiveServer | undefined> {
  if (config.token === undefined) return undefined
  const server = createLiveServer(hub, { token: config.token })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(config.port, config.host, resolve)
  })
  server.unref()
  if (ingressUrl === undefined) log('zidane services: live hub not registered (no RESTATE_INGRESS_URL): gateways reach it only through ZIDANE_LIVE_URLS')
  const registration = ingressUrl === undefined ? undefined : startReplicaRegistration({ ingressUrl, url: config.advertisedUrl, token: config.token, leaseMs: config.leaseMs, log })
  return { server, registration }
}

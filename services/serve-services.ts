import http2 from 'node:http2'
import * as restate from '@restatedev/restate-sdk'
import { createCommandRegistry, stopOrphanedCommands, useCommandRegistry } from 'zidane/tools'
import { createServices } from './composition'
import type { ServicesOptions } from './composition'
import type { ServicesConfig } from './config'
import { createAttemptDrain } from './drain/attempt-drain'
import { installGracefulShutdown } from './drain/graceful-shutdown'
import { loadShutdownConfig } from './drain/shutdown-config'
import { logLevelFrom, restateLogger } from './restate-logger'
import { loadLiveConfig } from './live/live-config'
import type { ReplicaRegistration } from './live/replica-registration'
import { startLiveServer } from './live/start-live-server'

/**
 * Serves the services `createServices(config, options)` builds on one HTTP/2 endpoint (bidirectional streaming);
 * verifies Restate request signatures when keys are configured. At start-up it stops the shell commands a killed
 * earlier process left running, and records its own. On SIGTERM/SIGINT it drains: running steps finish within the
 * grace, then it exits, and Restate continues the runs in the next process. The live, shutdown and log settings come
 * from `options.env`.
 */
export async function serveServices(config: ServicesConfig, options: Omit<ServicesOptions, 'liveToken'>): Promise<void> {
  const shutdown = loadShutdownConfig(config.workspaceRoot, options.env)
  const orphans = stopOrphanedCommands(shutdown.commandsDir)
  if (orphans > 0) console.log(`zidane services: stopped ${orphans} commands an earlier process left running`)
  useCommandRegistry(createCommandRegistry(shutdown.commandsDir))
  const live = loadLiveConfig(options.env)
  const services = createServices(config, { ...options, liveToken: live.token })
  const drain = createAttemptDrain()
  // Only the HTTP/2 handler (createEndpointHandler builds an HTTP/1 one too, and each logs its signing keys).
  // The SDK's lines at `LOG_LEVEL` (`RESTATE_LOGGING`, the SDK's own variable, wins for them when set).
  const endpoint = restate.endpoint().defaultServiceOptions({ hooks: [drain.hooks] }).setLogger(restateLogger(logLevelFrom(options.env.RESTATE_LOGGING || options.env.LOG_LEVEL)))
  for (const definition of services.definitions) endpoint.bind(definition)
  const handler = (config.identityKeys.length > 0 ? endpoint.withIdentityV1(...config.identityKeys) : endpoint).http2Handler()
  const server = http2.createServer(drain.handler(handler))
  const hub: { registration?: ReplicaRegistration | undefined } = {}
  // The hub deregisters before the drain refuses new requests (the deregistration runs here too); the deltas of
  // steps still draining are then missed by viewers, whose durable events still arrive.
  installGracefulShutdown({ server, drain: { ...drain, drain: async () => { await hub.registration?.stop(); await drain.drain() } }, graceMs: shutdown.graceMs, ...(services.tracing ? { flush: () => services.tracing?.flush() ?? Promise.resolve() } : {}) })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(config.port, config.host, resolve)
  })
  console.log(`zidane services listening on ${config.host}:${config.port}${config.identityKeys.length > 0 ? ' (request signatures required)' : ''}`)
  console.log(`zidane services: shell ${services.shell.mode} (${services.shell.reason})`)
  if (services.mcpServers.length > 0) console.log(`zidane services: MCP servers ${services.mcpServers.join(', ')}`)
  const started = await startLiveServer(services.liveHub, live, config.ingressUrl)
  if (started) console.log(`zidane services: live deltas on ${live.host}:${live.port}`)
  hub.registration = started?.registration
}

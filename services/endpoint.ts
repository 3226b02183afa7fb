import http2 from 'node:http2'
import * as restate from '@restatedev/restate-sdk'
import { createCommandRegistry, stopOrphanedCommands, useCommandRegistry } from 'zidane/tools'
import { sessionObject } from './agent-object/session-object'
import { childService } from './child-runner/child-service'
import { loadServicesConfig } from './config'
import { createAttemptDrain } from './drain/attempt-drain'
import { installGracefulShutdown } from './drain/graceful-shutdown'
import { loadShutdownConfig } from './drain/shutdown-config'
import { loadLiveConfig } from './live/live-config'
import { processLiveHub } from './live/process-hub'
import { liveReplicasObject } from './live/replica-registry-object'
import type { ReplicaRegistration } from './live/replica-registration'
import { startLiveServer } from './live/start-live-server'
import { inboxObject } from './inbox/inbox-object'
import { resumerObject } from './resumer/resumer-object'
import { admissionObject } from './admission/admission-object'
import { eventLogObject, eventWatchService } from './event-log/event-log-object'
import { shellPolicy } from './shell-policy'

/**
 * Serves the services on one HTTP/2 endpoint (bidirectional streaming); verifies Restate request signatures
 * when keys are configured. At start-up it stops the shell commands a killed earlier process left running, and
 * records its own. On SIGTERM/SIGINT it drains: running steps finish within the grace, then it exits, and Restate
 * continues the runs in the next process.
 */
async function main(): Promise<void> {
  const config = loadServicesConfig()
  const shutdown = loadShutdownConfig(config.workspaceRoot)
  const orphans = stopOrphanedCommands(shutdown.commandsDir)
  if (orphans > 0) console.log(`zidane services: stopped ${orphans} commands an earlier process left running`)
  useCommandRegistry(createCommandRegistry(shutdown.commandsDir))
  const drain = createAttemptDrain()
  // Only the HTTP/2 handler (createEndpointHandler builds an HTTP/1 one too, and each logs its signing keys).
  const endpoint = restate.endpoint().bind(sessionObject).bind(childService).bind(resumerObject).bind(inboxObject).defaultServiceOptions({ hooks: [drain.hooks] })
  endpoint.bind(eventLogObject).bind(eventWatchService).bind(admissionObject)
  const live = loadLiveConfig()
  endpoint.bind(liveReplicasObject({ token: live.token }))
  const handler = (config.identityKeys.length > 0 ? endpoint.withIdentityV1(...config.identityKeys) : endpoint).http2Handler()
  const server = http2.createServer(drain.handler(handler))
  const liveHub: { registration: ReplicaRegistration | undefined } = { registration: undefined }
  // The hub stays registered while running steps drain (they may still stream deltas); it deregisters before the exit.
  installGracefulShutdown({ server, drain: { ...drain, drain: async () => { await drain.drain(); await liveHub.registration?.stop() } }, graceMs: shutdown.graceMs })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(config.port, config.host, resolve)
  })
  console.log(`zidane services listening on ${config.host}:${config.port}${config.identityKeys.length > 0 ? ' (request signatures required)' : ''}`)
  const shell = shellPolicy().status
  console.log(`zidane services: shell ${shell.mode} (${shell.reason})`)
  const started = await startLiveServer(processLiveHub, live, config.ingressUrl)
  if (started) console.log(`zidane services: live deltas on ${live.host}:${live.port}`)
  liveHub.registration = started?.registration
}

await main()

import http2 from 'node:http2'
import * as restate from '@restatedev/restate-sdk'
import { stopRunningCommands } from 'zidane/tools'
import { sessionObject } from './agent-object/session-object'
import { childService } from './child-runner/child-service'
import { loadServicesConfig } from './config'
import { resumerObject } from './resumer/resumer-object'

/**
 * Serves the three services on one HTTP/2 endpoint (bidirectional streaming); verifies Restate request signatures
 * when keys are configured. On SIGTERM/SIGINT it stops the shell commands its tools started, then exits: Restate
 * replays the interrupted runs into the next process.
 */
async function main(): Promise<void> {
  const config = loadServicesConfig()
  const handler = restate.createEndpointHandler({
    services: [sessionObject, childService, resumerObject],
    ...(config.identityKeys.length > 0 ? { identityKeys: config.identityKeys } : {}),
  })
  const server = http2.createServer(handler)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(config.port, config.host, resolve)
  })
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      stopRunningCommands()
      process.exit(0)
    })
  }
  console.log(`zidane services listening on ${config.host}:${config.port}${config.identityKeys.length > 0 ? ' (request signatures required)' : ''}`)
}

await main()

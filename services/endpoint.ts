import * as restate from '@restatedev/restate-sdk'
import { sessionObject } from './agent-object/session-object'
import { childService } from './child-runner/child-service'
import { loadServicesConfig } from './config'
import { resumerObject } from './resumer/resumer-object'

/** Serves the three services on one HTTP/2 endpoint; verifies Restate request signatures when keys are configured. */
async function main(): Promise<void> {
  const config = loadServicesConfig()
  const port = await restate.serve({
    services: [sessionObject, childService, resumerObject],
    port: config.port,
    ...(config.identityKeys.length > 0 ? { identityKeys: config.identityKeys } : {}),
  })
  console.log(`zidane services listening on :${port}${config.identityKeys.length > 0 ? ' (request signatures required)' : ''}`)
}

await main()

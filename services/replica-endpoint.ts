import { loadServicesConfig } from './config'
import { serveServices } from './serve-services'
import { checkWorkspaceRoot } from './workspace-root'

/**
 * The services endpoint of one replica among several (`npm run start:cluster`, `docker-compose.cluster.yml`): before
 * serving, it checks that it sees the workspace root the other replicas share (`ZIDANE_WORKSPACE_ROOT_ID`, see
 * `services/workspace-root.ts`), and refuses to start with a message saying why when it does not. Without
 * `ZIDANE_WORKSPACE_ROOT_ID` it is the plain endpoint.
 */
async function main(env: NodeJS.ProcessEnv): Promise<void> {
  const config = loadServicesConfig(env)
  const expectedId = env.ZIDANE_WORKSPACE_ROOT_ID
  if (expectedId) await checkWorkspaceRoot({ root: config.workspaceRoot, expectedId, init: env.ZIDANE_WORKSPACE_ROOT_INIT === '1' })
  await serveServices(config, { env })
}

await main(process.env).catch((error: unknown) => {
  const code = (error as { code?: unknown }).code
  console.error(`zidane services: refusing to start: ${typeof code === 'string' ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})

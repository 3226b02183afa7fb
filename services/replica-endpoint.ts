import { loadServicesConfig } from './config'
import { checkWorkspaceRoot } from './workspace-root'

/**
 * The services endpoint of one replica among several (`npm run start:cluster`, `docker-compose.cluster.yml`): before
 * serving, it checks that it sees the workspace root the other replicas share (`ZIDANE_WORKSPACE_ROOT_ID`, see
 * `services/workspace-root.ts`), and refuses to start with a message saying why when it does not. Without
 * `ZIDANE_WORKSPACE_ROOT_ID` it is the plain endpoint.
 */
async function main(): Promise<void> {
  const config = loadServicesConfig()
  const expectedId = process.env.ZIDANE_WORKSPACE_ROOT_ID
  if (expectedId) await checkWorkspaceRoot({ root: config.workspaceRoot, expectedId, init: process.env.ZIDANE_WORKSPACE_ROOT_INIT === '1' })
  await import('./endpoint')
}

await main().catch((error: unknown) => {
  const code = (error as { code?: unknown }).code
  console.error(`zidane services: refusing to start: ${typeof code === 'string' ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}`)
  process.exit(1)
})

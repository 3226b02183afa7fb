import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { WORKSPACE_ROOT_MARKER, WorkspaceRootError, checkWorkspaceRoot } from '../../services/workspace-root'

const run = promisify(execFile)
const folders: string[] = []
async function folder(): Promise<string> {
  const created = await mkdtemp(join(tmpdir(), 'zidane-root-'))
  folders.push(created)
  return created
}
afterEach(async () => { for (const each of folders.splice(0)) await rm(each, { recursive: true, force: true }) })

async function refusal(check: Parameters<typeof checkWorkspaceRoot>[0]): Promise<WorkspaceRootError> {
  const error: unknown = await checkWorkspaceRoot(check).then(() => undefined, (caught: unknown) => caught)
  if (!(error instanceof WorkspaceRootError)) throw new Error(`expected a WorkspaceRootError, got ${String(error)}`)
  return error
}

describe('shared workspace root', () => {
  it('the first replica writes the marker and a second replica on the same root starts', async () => {
    const root = await folder()
    await checkWorkspaceRoot({ root, expectedId: 'deploy-1', init: true })
    expect((await readFile(join(root, WORKSPACE_ROOT_MARKER), 'utf8')).trim()).toBe('deploy-1')
    await expect(checkWorkspaceRoot({ root, expectedId: 'deploy-1', init: false })).resolves.toBeUndefined()
    // The first replica restarting finds its own marker.
    await expect(checkWorkspaceRoot({ root, expectedId: 'deploy-1', init: true })).resolves.toBeUndefined()
  })

  it('a replica that sees another (local, unmarked) folder refuses to start and says to mount the shared volume', async () => {
    await checkWorkspaceRoot({ root: await folder(), expectedId: 'deploy-1', init: true })
    const error = await refusal({ root: await folder(), expectedId: 'deploy-1', init: false })
    expect(error.code).toBe('workspace_root_unmarked')
    expect(error.message).toContain('does not see the workspace root the other replicas share')
    expect(error.message).toContain('ZIDANE_WORKSPACE_ROOT')
  })

  it('a replica whose root belongs to another deployment refuses to start, even as the first replica', async () => {
    const root = await folder()
    await checkWorkspaceRoot({ root, expectedId: 'deploy-1', init: true })
    for (const init of [false, true]) {
      const error = await refusal({ root, expectedId: 'deploy-2', init })
      expect(error.code).toBe('workspace_root_mismatch')
      expect(error.message).toContain('the replicas see different workspace roots')
    }
  })

  it('the replica endpoint exits with the refusal before it serves anything', async () => {
    const root = await folder()
    const failed = await run(process.execPath, ['--import', 'tsx', 'services/replica-endpoint.ts'], {
      env: { ...process.env, ZIDANE_WORKSPACE_ROOT: root, ZIDANE_WORKSPACE_ROOT_ID: 'deploy-1', ZIDANE_WORKSPACE_ROOT_INIT: '0', SERVICES_PORT: '1' },
      timeout: 60_000,
    }).then(() => undefined, (error: { code?: number; stderr?: string }) => error)
    expect(failed?.code).toBe(1)
    expect(failed?.stderr).toContain('refusing to start: workspace_root_unmarked')
  })
})

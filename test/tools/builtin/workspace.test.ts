import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { createWorkspace } from '../../../src/tools/builtin/workspace'
import type { Workspace } from '../../../src/tools/builtin/workspace'
import { useSandbox, writeTree } from './tool-context'

describe('createWorkspace', () => {
  const sandbox = useSandbox()
  let workspace: Workspace

  beforeEach(async () => {
    await mkdir(path.join(sandbox.root, 'src'))
    await writeTree(sandbox.outside, { 'secret.txt': 'secret' })
    workspace = createWorkspace(sandbox.root)
  })

  it('resolves relative paths, including ones that do not exist yet, inside the root', async () => {
    expect(await workspace.resolve('src/new/file.ts')).toEqual({ root: sandbox.root, absolute: path.join(sandbox.root, 'src/new/file.ts'), relative: 'src/new/file.ts' })
    expect(await workspace.resolve('.')).toEqual({ root: sandbox.root, absolute: sandbox.root, relative: '.' })
    expect((await workspace.resolve('src/../src/a.ts')).relative).toBe('src/a.ts')
  })

  it('allows absolute paths inside the root', async () => {
    expect((await workspace.resolve(path.join(sandbox.root, 'src'))).relative).toBe('src')
  })

  it('refuses a .. escape', async () => {
    await expect(workspace.resolve('../outside/secret.txt')).rejects.toMatchObject({ name: 'ToolError', code: 'path_outside_workspace' })
    await expect(workspace.resolve('src/../../x')).rejects.toMatchObject({ code: 'path_outside_workspace' })
  })

  it('refuses absolute paths outside the root', async () => {
    await expect(workspace.resolve('/etc/passwd')).rejects.toMatchObject({ code: 'path_outside_workspace', message: expect.stringContaining('/etc/passwd') })
  })

  it('refuses a root-named sibling such as root-other', async () => {
    await mkdir(`${sandbox.root}-other`)
    await expect(workspace.resolve(`${sandbox.root}-other/file`)).rejects.toMatchObject({ code: 'path_outside_workspace' })
  })

  it('refuses a symlink inside the root that points to a file outside', async () => {
    await symlink(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.root, 'link.txt'))
    await expect(workspace.resolve('link.txt')).rejects.toMatchObject({ code: 'path_outside_workspace', message: expect.stringContaining('symbolic link') })
  })

  it('refuses new paths below a symlinked directory that points outside', async () => {
    await symlink(sandbox.outside, path.join(sandbox.root, 'linked-dir'))
    await expect(workspace.resolve('linked-dir/secret.txt')).rejects.toMatchObject({ code: 'path_outside_workspace' })
    await expect(workspace.resolve('linked-dir/not/yet/created.txt')).rejects.toMatchObject({ code: 'path_outside_workspace' })
  })

  it('refuses a dangling symlink whose target would be created outside', async () => {
    await symlink(path.join(sandbox.outside, 'created-later.txt'), path.join(sandbox.root, 'dangling.txt'))
    await expect(workspace.resolve('dangling.txt')).rejects.toMatchObject({ code: 'path_outside_workspace' })
  })

  it('follows symlinks that stay inside the root to their real path', async () => {
    await writeFile(path.join(sandbox.root, 'src/real.ts'), 'x')
    await symlink(path.join(sandbox.root, 'src'), path.join(sandbox.root, 'alias'))
    expect(await workspace.resolve('alias/real.ts')).toEqual({ root: sandbox.root, absolute: path.join(sandbox.root, 'src/real.ts'), relative: 'src/real.ts' })
  })

  it('accepts a root given through a symlink', async () => {
    const linkedRoot = path.join(path.dirname(sandbox.root), 'root-link')
    await symlink(sandbox.root, linkedRoot)
    const linked = createWorkspace(linkedRoot)
    expect((await linked.resolve('src')).absolute).toBe(path.join(sandbox.root, 'src'))
    expect((await linked.resolve(path.join(sandbox.root, 'src'))).relative).toBe('src')
    await expect(linked.resolve('../outside/secret.txt')).rejects.toMatchObject({ code: 'path_outside_workspace' })
  })
})

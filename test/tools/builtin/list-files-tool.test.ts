import { symlink } from 'node:fs/promises'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { listFilesTool } from '../../../src/tools/builtin/list-files-tool'
import { createWorkspace } from '../../../src/tools/builtin/workspace'
import type { ToolDef } from '../../../src/tools/tool'
import { runTool, textOf, useSandbox, writeTree } from './tool-context'

describe('list_files', () => {
  const sandbox = useSandbox()
  let tool: ToolDef

  beforeEach(async () => {
    await writeTree(sandbox.root, { 'b.txt': '', 'src/a.ts': '' })
    tool = listFilesTool(createWorkspace(sandbox.root))
  })

  it('lists the root by default, marking directories and symlinks', async () => {
    await symlink(path.join(sandbox.root, 'b.txt'), path.join(sandbox.root, 'c-link'))
    expect(textOf((await runTool(tool, {})).content)).toBe('b.txt\nc-link@\nsrc/')
  })

  it('lists a subdirectory', async () => {
    expect(textOf((await runTool(tool, { path: 'src' })).content)).toBe('a.ts')
  })

  it('fails clearly for a missing path and for a file', async () => {
    await expect(runTool(tool, { path: 'nope' })).rejects.toMatchObject({ code: 'file_not_found' })
    await expect(runTool(tool, { path: 'b.txt' })).rejects.toMatchObject({ code: 'not_a_directory' })
  })

  it('refuses to list a symlinked directory pointing outside, or ../', async () => {
    await symlink(sandbox.outside, path.join(sandbox.root, 'linked-dir'))
    await expect(runTool(tool, { path: 'linked-dir' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
    await expect(runTool(tool, { path: '..' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
  })
})

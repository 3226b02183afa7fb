import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { listFilesTool } from '../../../src/tools/builtin/list-files-tool'
import { createWorkspace } from '../../../src/tools/builtin/workspace'
import type { ToolDef } from '../../../src/tools/tool'
import { createSandbox, runTool, textOf } from './tool-context'

describe('list_files', () => {
  let root: string
  let outside: string
  let tool: ToolDef
  let cleanup: () => Promise<void>

  beforeEach(async () => {
    ;({ root, outside, cleanup } = await createSandbox())
    await mkdir(path.join(root, 'src'), { recursive: true })
    await mkdir(outside)
    await writeFile(path.join(root, 'b.txt'), '')
    await writeFile(path.join(root, 'src/a.ts'), '')
    tool = listFilesTool(createWorkspace(root))
  })
  afterEach(() => cleanup())

  it('lists the root by default, marking directories and symlinks', async () => {
    await symlink(path.join(root, 'b.txt'), path.join(root, 'c-link'))
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
    await symlink(outside, path.join(root, 'linked-dir'))
    await expect(runTool(tool, { path: 'linked-dir' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
    await expect(runTool(tool, { path: '..' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
  })
})

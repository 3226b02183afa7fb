import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createWorkspace } from '../../../src/tools/builtin/workspace'
import { writeFileTool } from '../../../src/tools/builtin/write-file-tool'
import type { ToolDef } from '../../../src/tools/tool'
import { createSandbox, runTool, textOf } from './tool-context'

describe('write_file', () => {
  let root: string
  let outside: string
  let tool: ToolDef
  let cleanup: () => Promise<void>

  beforeEach(async () => {
    ;({ root, outside, cleanup } = await createSandbox())
    await mkdir(root)
    await mkdir(outside)
    tool = writeFileTool(createWorkspace(root))
  })
  afterEach(() => cleanup())

  it('writes a file, creating parent directories', async () => {
    const result = await runTool(tool, { path: 'a/b/c.txt', content: 'héllo' })
    expect(textOf(result.content)).toBe('Wrote 6 bytes to a/b/c.txt.')
    expect(await readFile(path.join(root, 'a/b/c.txt'), 'utf8')).toBe('héllo')
  })

  it('replaces an existing file and refuses to overwrite a directory', async () => {
    await writeFile(path.join(root, 'x.txt'), 'old')
    await runTool(tool, { path: 'x.txt', content: 'new' })
    expect(await readFile(path.join(root, 'x.txt'), 'utf8')).toBe('new')
    await mkdir(path.join(root, 'dir'))
    await expect(runTool(tool, { path: 'dir', content: '' })).rejects.toMatchObject({ code: 'not_a_file' })
  })

  it('refuses ../x and absolute paths outside the root', async () => {
    await expect(runTool(tool, { path: '../outside/x.txt', content: 'x' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
    await expect(runTool(tool, { path: path.join(outside, 'y.txt'), content: 'x' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
    await expect(stat(path.join(outside, 'x.txt'))).rejects.toThrow()
  })

  it('refuses to write through a symlinked file, a symlinked directory or a dangling link pointing outside', async () => {
    await writeFile(path.join(outside, 'target.txt'), 'untouched')
    await symlink(path.join(outside, 'target.txt'), path.join(root, 'link.txt'))
    await symlink(outside, path.join(root, 'linked-dir'))
    await symlink(path.join(outside, 'planted.txt'), path.join(root, 'dangling.txt'))
    for (const escape of ['link.txt', 'linked-dir/new.txt', 'linked-dir/sub/new.txt', 'dangling.txt']) {
      await expect(runTool(tool, { path: escape, content: 'pwned' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
    }
    expect(await readFile(path.join(outside, 'target.txt'), 'utf8')).toBe('untouched')
    await expect(stat(path.join(outside, 'new.txt'))).rejects.toThrow()
    await expect(stat(path.join(outside, 'sub'))).rejects.toThrow()
    await expect(stat(path.join(outside, 'planted.txt'))).rejects.toThrow()
  })
})

import { mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { createWorkspace } from '../../../src/tools/builtin/workspace'
import { writeFileTool } from '../../../src/tools/builtin/write-file-tool'
import type { ToolDef } from '../../../src/tools/tool'
import { runTool, textOf, useSandbox } from './tool-context'

describe('write_file', () => {
  const sandbox = useSandbox()
  let tool: ToolDef

  beforeEach(() => {
    tool = writeFileTool(createWorkspace(sandbox.root))
  })

  it('writes a file, creating parent directories', async () => {
    const result = await runTool(tool, { path: 'a/b/c.txt', content: 'héllo' })
    expect(textOf(result.content)).toBe('Wrote 6 bytes to a/b/c.txt.')
    expect(await readFile(path.join(sandbox.root, 'a/b/c.txt'), 'utf8')).toBe('héllo')
  })

  it('replaces an existing file and refuses to overwrite a directory', async () => {
    await writeFile(path.join(sandbox.root, 'x.txt'), 'old')
    await runTool(tool, { path: 'x.txt', content: 'new' })
    expect(await readFile(path.join(sandbox.root, 'x.txt'), 'utf8')).toBe('new')
    await mkdir(path.join(sandbox.root, 'dir'))
    await expect(runTool(tool, { path: 'dir', content: '' })).rejects.toMatchObject({ code: 'not_a_file' })
  })

  it('refuses ../x and absolute paths outside the root', async () => {
    await expect(runTool(tool, { path: '../outside/x.txt', content: 'x' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
    await expect(runTool(tool, { path: path.join(sandbox.outside, 'y.txt'), content: 'x' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
    await expect(stat(path.join(sandbox.outside, 'x.txt'))).rejects.toThrow()
  })

  it('refuses to write through a symlinked file, a symlinked directory or a dangling link pointing outside', async () => {
    await writeFile(path.join(sandbox.outside, 'target.txt'), 'untouched')
    await symlink(path.join(sandbox.outside, 'target.txt'), path.join(sandbox.root, 'link.txt'))
    await symlink(sandbox.outside, path.join(sandbox.root, 'linked-dir'))
    await symlink(path.join(sandbox.outside, 'planted.txt'), path.join(sandbox.root, 'dangling.txt'))
    for (const escape of ['link.txt', 'linked-dir/new.txt', 'linked-dir/sub/new.txt', 'dangling.txt']) {
      await expect(runTool(tool, { path: escape, content: 'pwned' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
    }
    expect(await readFile(path.join(sandbox.outside, 'target.txt'), 'utf8')).toBe('untouched')
    await expect(stat(path.join(sandbox.outside, 'new.txt'))).rejects.toThrow()
    await expect(stat(path.join(sandbox.outside, 'sub'))).rejects.toThrow()
    await expect(stat(path.join(sandbox.outside, 'planted.txt'))).rejects.toThrow()
  })
})

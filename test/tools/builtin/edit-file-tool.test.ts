import { readFile, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { editFileTool } from '../../../src/tools/builtin/edit-file-tool'
import { createWorkspace } from '../../../src/tools/builtin/workspace'
import type { ToolDef } from '../../../src/tools/tool'
import { runTool, textOf, useSandbox } from './tool-context'

describe('edit_file', () => {
  const sandbox = useSandbox()
  let tool: ToolDef
  const read = (): Promise<string> => readFile(path.join(sandbox.root, 'code.ts'), 'utf8')

  beforeEach(async () => {
    await writeFile(path.join(sandbox.root, 'code.ts'), 'let a = 1\nlet b = 2\nlet b = 3\n')
    tool = editFileTool(createWorkspace(sandbox.root))
  })

  it('replaces a unique occurrence, literally (no $ patterns)', async () => {
    const result = await runTool(tool, { path: 'code.ts', oldText: 'let a = 1', newText: 'const a = "$&"' })
    expect(textOf(result.content)).toBe('Replaced 1 occurrence in code.ts.')
    expect(await read()).toBe('const a = "$&"\nlet b = 2\nlet b = 3\n')
  })

  it('fails when oldText is not found', async () => {
    await expect(runTool(tool, { path: 'code.ts', oldText: 'let c', newText: 'x' })).rejects.toMatchObject({ code: 'old_text_not_found' })
  })

  it('fails when oldText is ambiguous and leaves the file unchanged', async () => {
    await expect(runTool(tool, { path: 'code.ts', oldText: 'let b', newText: 'const b' })).rejects.toMatchObject({ code: 'old_text_ambiguous', message: expect.stringContaining('2 times') })
    expect(await read()).toBe('let a = 1\nlet b = 2\nlet b = 3\n')
  })

  it('replaces every occurrence with replaceAll', async () => {
    expect(textOf((await runTool(tool, { path: 'code.ts', oldText: 'let b', newText: 'const b', replaceAll: true })).content)).toBe('Replaced 2 occurrences in code.ts.')
    expect(await read()).toBe('let a = 1\nconst b = 2\nconst b = 3\n')
  })

  it('fails clearly for a missing file and refuses a symlink pointing outside', async () => {
    await expect(runTool(tool, { path: 'missing.ts', oldText: 'a', newText: 'b' })).rejects.toMatchObject({ code: 'file_not_found' })
    const outsideFile = path.join(sandbox.outside, 'outside.ts')
    await writeFile(outsideFile, 'let a = 1')
    await symlink(outsideFile, path.join(sandbox.root, 'link.ts'))
    await expect(runTool(tool, { path: 'link.ts', oldText: 'let a', newText: 'x' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
    expect(await readFile(outsideFile, 'utf8')).toBe('let a = 1')
  })
})

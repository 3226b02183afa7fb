import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { grepTool } from '../../../src/tools/builtin/grep-tool'
import { createWorkspace } from '../../../src/tools/builtin/workspace'
import type { ToolDef } from '../../../src/tools/tool'
import { createSandbox, runTool, textOf } from './tool-context'

describe('grep', () => {
  let root: string
  let outside: string
  let tool: ToolDef
  let cleanup: () => Promise<void>

  beforeEach(async () => {
    ;({ root, outside, cleanup } = await createSandbox())
    await mkdir(path.join(root, 'src/deep'), { recursive: true })
    await mkdir(outside)
    await writeFile(path.join(root, 'src/a.ts'), 'const a = 1\nfunction alpha() {}\n')
    await writeFile(path.join(root, 'src/deep/b.ts'), 'function beta() {}\n')
    await writeFile(path.join(root, 'notes.md'), 'function in prose\n')
    await writeFile(path.join(root, 'blob.bin'), Buffer.from('function\0binary'))
    await writeFile(path.join(outside, 'secret.ts'), 'function secret() {}\n')
    tool = grepTool(createWorkspace(root))
  })
  afterEach(() => cleanup())

  it('returns file:line: text for matching lines, skipping binary files', async () => {
    expect(textOf((await runTool(tool, { pattern: 'function \\w+\\(' })).content)).toBe('src/a.ts:2: function alpha() {}\nsrc/deep/b.ts:1: function beta() {}')
  })

  it('filters by glob (file name at any depth) and by path', async () => {
    expect(textOf((await runTool(tool, { pattern: 'function', glob: '*.md' })).content)).toBe('notes.md:1: function in prose')
    expect(textOf((await runTool(tool, { pattern: 'function', path: 'src/deep' })).content)).toBe('src/deep/b.ts:1: function beta() {}')
    expect(textOf((await runTool(tool, { pattern: 'const', path: 'src/a.ts' })).content)).toBe('src/a.ts:1: const a = 1')
  })

  it('caps the number of matches', async () => {
    await writeFile(path.join(root, 'many.txt'), 'hit\n'.repeat(2000))
    const text = textOf((await runTool(tool, { pattern: '^hit$', path: 'many.txt' })).content)
    expect(text.split('\n')).toHaveLength(501)
    expect(text).toMatch(/\[Output capped; more matches exist\./)
  })

  it('reports no matches and invalid regular expressions', async () => {
    expect(textOf((await runTool(tool, { pattern: 'zzz' })).content)).toBe('No matches found.')
    await expect(runTool(tool, { pattern: '(' })).rejects.toMatchObject({ code: 'invalid_pattern' })
  })

  it('never reads through symlinks pointing outside', async () => {
    await symlink(outside, path.join(root, 'linked-dir'))
    await symlink(path.join(outside, 'secret.ts'), path.join(root, 'secret-link.ts'))
    expect(textOf((await runTool(tool, { pattern: 'secret' })).content)).toBe('No matches found.')
    await expect(runTool(tool, { pattern: 'secret', path: 'secret-link.ts' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
    await expect(runTool(tool, { pattern: 'secret', path: 'linked-dir' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
  })
})

import { symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { grepTool } from '../../../src/tools/builtin/grep-tool'
import { createWorkspace } from '../../../src/tools/builtin/workspace'
import type { ToolDef } from '../../../src/tools/tool'
import { runTool, textOf, useSandbox, writeTree } from './tool-context'

describe('grep', () => {
  const sandbox = useSandbox()
  let tool: ToolDef

  beforeEach(async () => {
    await writeTree(sandbox.root, {
      'src/a.ts': 'const a = 1\nfunction alpha() {}\n',
      'src/deep/b.ts': 'function beta() {}\n',
      'notes.md': 'function in prose\n',
      'blob.bin': Buffer.from('function\0binary'),
    })
    await writeTree(sandbox.outside, { 'secret.ts': 'function secret() {}\n' })
    tool = grepTool(createWorkspace(sandbox.root))
  })

  it('returns file:line: text for matching lines, skipping binary files', async () => {
    expect(textOf((await runTool(tool, { pattern: 'function \\w+\\(' })).content)).toBe('src/a.ts:2: function alpha() {}\nsrc/deep/b.ts:1: function beta() {}')
  })

  it('filters by glob (file name at any depth) and by path', async () => {
    expect(textOf((await runTool(tool, { pattern: 'function', glob: '*.md' })).content)).toBe('notes.md:1: function in prose')
    expect(textOf((await runTool(tool, { pattern: 'function', path: 'src/deep' })).content)).toBe('src/deep/b.ts:1: function beta() {}')
    expect(textOf((await runTool(tool, { pattern: 'const', path: 'src/a.ts' })).content)).toBe('src/a.ts:1: const a = 1')
  })

  it('caps the number of matches', async () => {
    await writeFile(path.join(sandbox.root, 'many.txt'), 'hit\n'.repeat(2000))
    const text = textOf((await runTool(tool, { pattern: '^hit$', path: 'many.txt' })).content)
    expect(text.split('\n')).toHaveLength(501)
    expect(text).toMatch(/\[Output capped; more matches exist\./)
  })

  it('reports no matches and invalid regular expressions', async () => {
    expect(textOf((await runTool(tool, { pattern: 'zzz' })).content)).toBe('No matches found.')
    await expect(runTool(tool, { pattern: '(' })).rejects.toMatchObject({ code: 'invalid_pattern' })
  })

  it('never reads through symlinks pointing outside', async () => {
    await symlink(sandbox.outside, path.join(sandbox.root, 'linked-dir'))
    await symlink(path.join(sandbox.outside, 'secret.ts'), path.join(sandbox.root, 'secret-link.ts'))
    expect(textOf((await runTool(tool, { pattern: 'secret' })).content)).toBe('No matches found.')
    await expect(runTool(tool, { pattern: 'secret', path: 'secret-link.ts' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
    await expect(runTool(tool, { pattern: 'secret', path: 'linked-dir' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
  })
})

import { symlink } from 'node:fs/promises'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { globTool } from '../../../src/tools/builtin/glob-tool'
import { createWorkspace } from '../../../src/tools/builtin/workspace'
import type { ToolDef } from '../../../src/tools/tool'
import { runTool, textOf, useSandbox, writeTree } from './tool-context'

describe('glob', () => {
  const sandbox = useSandbox()
  let tool: ToolDef

  beforeEach(async () => {
    const files = ['top.ts', 'src/a.ts', 'src/b.tsx', 'src/c.js', 'src/deep/d.ts', 'node_modules/pkg/e.ts']
    await writeTree(sandbox.root, Object.fromEntries(files.map(file => [file, ''])))
    await writeTree(sandbox.outside, { 'secret.ts': '' })
    tool = globTool(createWorkspace(sandbox.root))
  })

  it('finds files at every depth with ** and alternatives, skipping node_modules', async () => {
    expect(textOf((await runTool(tool, { pattern: '**/*.{ts,tsx}' })).content)).toBe('src/a.ts\nsrc/b.tsx\nsrc/deep/d.ts\ntop.ts')
  })

  it('matches * at the top level only and searches below path', async () => {
    expect(textOf((await runTool(tool, { pattern: '*.ts' })).content)).toBe('top.ts')
    expect(textOf((await runTool(tool, { pattern: '*.ts', path: 'src' })).content)).toBe('src/a.ts')
    expect(textOf((await runTool(tool, { pattern: '?.js', path: 'src' })).content)).toBe('src/c.js')
  })

  it('says when nothing matches', async () => {
    expect(textOf((await runTool(tool, { pattern: '**/*.rb' })).content)).toBe('No files match.')
  })

  it('does not follow a symlinked directory pointing outside and refuses it as path', async () => {
    await symlink(sandbox.outside, path.join(sandbox.root, 'linked-dir'))
    expect(textOf((await runTool(tool, { pattern: '**/secret.ts' })).content)).toBe('No files match.')
    await expect(runTool(tool, { pattern: '*', path: 'linked-dir' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
    await expect(runTool(tool, { pattern: '*', path: '../outside' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
  })
})

import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { globTool } from '../../../src/tools/builtin/glob-tool'
import { createWorkspace } from '../../../src/tools/builtin/workspace'
import type { ToolDef } from '../../../src/tools/tool'
import { createSandbox, runTool, textOf } from './tool-context'

describe('glob', () => {
  let root: string
  let outside: string
  let tool: ToolDef
  let cleanup: () => Promise<void>

  beforeEach(async () => {
    ;({ root, outside, cleanup } = await createSandbox())
    await mkdir(path.join(root, 'src/deep'), { recursive: true })
    await mkdir(path.join(root, 'node_modules/pkg'), { recursive: true })
    await mkdir(outside)
    for (const file of ['top.ts', 'src/a.ts', 'src/b.tsx', 'src/c.js', 'src/deep/d.ts', 'node_modules/pkg/e.ts']) await writeFile(path.join(root, file), '')
    await writeFile(path.join(outside, 'secret.ts'), '')
    tool = globTool(createWorkspace(root))
  })
  afterEach(() => cleanup())

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
    await symlink(outside, path.join(root, 'linked-dir'))
    expect(textOf((await runTool(tool, { pattern: '**/secret.ts' })).content)).toBe('No files match.')
    await expect(runTool(tool, { pattern: '*', path: 'linked-dir' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
    await expect(runTool(tool, { pattern: '*', path: '../outside' })).rejects.toMatchObject({ code: 'path_outside_workspace' })
  })
})

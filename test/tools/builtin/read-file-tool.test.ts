import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { readFileTool } from '../../../src/tools/builtin/read-file-tool'
import { createWorkspace } from '../../../src/tools/builtin/workspace'
import type { ToolDef } from '../../../src/tools/tool'
import { runTool, textOf, useSandbox } from './tool-context'

describe('read_file', () => {
  const sandbox = useSandbox()
  let tool: ToolDef

  beforeEach(async () => {
    await mkdir(path.join(sandbox.root, 'dir'))
    await writeFile(path.join(sandbox.root, 'notes.txt'), 'one\ntwo\nthree\nfour\n')
    tool = readFileTool(createWorkspace(sandbox.root))
  })

  it('returns numbered lines of a text file', async () => {
    expect(textOf((await runTool(tool, { path: 'notes.txt' })).content)).toBe('1\tone\n2\ttwo\n3\tthree\n4\tfour')
  })

  it('pages with offset and limit and says where to continue', async () => {
    expect(textOf((await runTool(tool, { path: 'notes.txt', offset: 2, limit: 2 })).content)).toBe('2\ttwo\n3\tthree\n[More lines follow. Continue with offset=4.]')
  })

  it('caps output at 256 KiB with a note', async () => {
    await writeFile(path.join(sandbox.root, 'big.txt'), `${'x'.repeat(1000)}\n`.repeat(1000))
    const text = textOf((await runTool(tool, { path: 'big.txt', limit: 5000 })).content)
    expect(Buffer.byteLength(text)).toBeLessThan(256 * 1024 + 200)
    expect(text).toMatch(/\[Output capped at 256 KiB\. Continue with offset=\d+\.\]$/)
  })

  it('reports empty files and offsets past the end', async () => {
    await writeFile(path.join(sandbox.root, 'empty.txt'), '')
    expect(textOf((await runTool(tool, { path: 'empty.txt' })).content)).toContain('is empty')
    expect(textOf((await runTool(tool, { path: 'notes.txt', offset: 10 })).content)).toContain('past the end')
  })

  it('fails clearly for a missing file, a directory and a binary file', async () => {
    await writeFile(path.join(sandbox.root, 'blob.bin'), Buffer.from([1, 0, 2]))
    await expect(runTool(tool, { path: 'missing.txt' })).rejects.toMatchObject({ code: 'file_not_found', message: 'File not found: missing.txt' })
    await expect(runTool(tool, { path: 'dir' })).rejects.toMatchObject({ code: 'not_a_file' })
    await expect(runTool(tool, { path: 'blob.bin' })).rejects.toMatchObject({ code: 'binary_file' })
  })

  it('refuses ../x, /etc/passwd and a symlink pointing outside', async () => {
    await writeFile(path.join(sandbox.outside, 'secret.txt'), 'secret')
    await symlink(path.join(sandbox.outside, 'secret.txt'), path.join(sandbox.root, 'link.txt'))
    await symlink(sandbox.outside, path.join(sandbox.root, 'linked-dir'))
    for (const escape of ['../outside/secret.txt', '/etc/passwd', 'link.txt', 'linked-dir/secret.txt']) {
      await expect(runTool(tool, { path: escape })).rejects.toMatchObject({ code: 'path_outside_workspace' })
    }
  })
})

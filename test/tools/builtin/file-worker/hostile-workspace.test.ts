import { execFileSync, spawn } from 'node:child_process'
import { mkdir, open, readFile, stat, symlink, writeFile } from 'node:fs/promises'
import { createServer } from 'node:net'
import type { Server } from 'node:net'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { builtinWorkspace, createBuiltinTools } from '../../../../src/tools/builtin/create-builtin-tools'
import { workspaceOutputWriter } from '../../../../src/tools/builtin/workspace'
import type { ToolDef, ToolResult } from '../../../../src/tools/tool'
import { ToolError } from '../../../../src/tools/tool'
import { runTool, sandboxModes, useSandbox } from '../tool-context'

const TIMEOUT_MS = 4000
const CANARY = 'host file, must never change\n'

/** Runs a tool and returns its text, or the code and message of the `ToolError` it threw. */
async function attempt(tool: ToolDef, input: Record<string, unknown>): Promise<{ text: string; code?: string }> {
  try {
    const result: ToolResult = await runTool(tool, input as never)
    return { text: typeof result.content === 'string' ? result.content : JSON.stringify(result.content) }
  } catch (error) {
    if (error instanceof ToolError) return { text: error.message, code: error.code }
    throw error
  }
}

const modes = sandboxModes()

describe.each(modes)('file tools against a hostile workspace, %s', (_mode, sandbox) => {
  const folders = useSandbox()
  let tools: Map<string, ToolDef>
  let canary: string
  const tool = (name: string): ToolDef => {
    const found = tools.get(name)
    if (!found) throw new Error(`no tool ${name}`)
    return found
  }
  const options = (): Parameters<typeof createBuiltinTools>[0] => ({ root: folders.root, files: { timeoutMs: TIMEOUT_MS, ...(sandbox ? { sandbox } : {}) } })

  beforeEach(async () => {
    tools = new Map(createBuiltinTools(options()).map(definition => [definition.spec.name, definition]))
    canary = path.join(folders.outside, 'canary.txt')
    await writeFile(canary, CANARY)
  })

  it('keeps persisted outputs out of a planted folder link and a planted file link: the canary is untouched', async () => {
    const write = workspaceOutputWriter(builtinWorkspace(options()))
    await symlink(folders.outside, path.join(folders.root, 'tool-results'))
    await expect(write('call_1.txt', 'x'.repeat(300 * 1024))).rejects.toMatchObject({ code: 'not_a_directory' })
    await expect(stat(path.join(folders.outside, 'call_1.txt'))).rejects.toThrow()
    await (await import('node:fs/promises')).unlink(path.join(folders.root, 'tool-results'))
    await mkdir(path.join(folders.root, 'tool-results'))
    await symlink(canary, path.join(folders.root, 'tool-results', 'call_2.txt'))
    await expect(write('call_2.txt', 'overwritten')).rejects.toMatchObject({ code: 'path_is_link' })
    expect(await readFile(canary, 'utf8')).toBe(CANARY)
    expect(await write('call_3.txt', 'kept')).toEqual({ path: 'tool-results/call_3.txt', bytes: 4 })
  })

  it('answers write_file, edit_file and read_file on a FIFO with an error at once, never blocking', async () => {
    execFileSync('mkfifo', [path.join(folders.root, 'pipe')])
    const started = Date.now()
    const results = await Promise.all([
      attempt(tool('write_file'), { path: 'pipe', content: 'x' }),
      attempt(tool('edit_file'), { path: 'pipe', oldText: 'a', newText: 'b' }),
      attempt(tool('read_file'), { path: 'pipe' }),
      attempt(tool('grep'), { pattern: 'x', path: 'pipe' }),
    ])
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS)
    expect(results.slice(0, 3).map(result => result.code)).toEqual(['not_a_file', 'not_a_file', 'not_a_file'])
    expect(results[3]?.text).toBe('No matches found.')
  })

  it('answers every call while the tenant\'s shell swaps a file for a FIFO and a folder for a link, in one worker', async () => {
    const groups: Array<number | undefined> = []
    const swapping = new Map(createBuiltinTools({ ...options(), files: { ...options().files, timeoutMs: 15_000, onWorkerStart: group => groups.push(group) } }).map(definition => [definition.spec.name, definition]))
    const use = (name: string): ToolDef => swapping.get(name) as ToolDef
    // Between the worker's lstat and its open, the name is a FIFO half the time; the folder a link to / or gone.
    const script = 'while :; do mkfifo f.tmp; mv -f f.tmp x; echo hi > r.tmp; mv -f r.tmp x; rm -rf d; ln -s / d; rm -f d; mkdir d; mkfifo d/p; echo hi > d/q; done'
    const shell = spawn('sh', ['-c', script], { cwd: folders.root, stdio: 'ignore' })
    try {
      for (let round = 0; round < 40; round++) {
        const results = [
          await attempt(use('read_file'), { path: 'x' }),
          await attempt(use('write_file'), { path: 'x', content: 'w' }),
          await attempt(use('edit_file'), { path: 'x', oldText: 'hi', newText: 'yo' }),
          await attempt(use('grep'), { pattern: 'hi', path: '.' }),
          await attempt(use('list_files'), { path: 'd' }),
          await attempt(use('read_file'), { path: 'd/q' }),
        ]
        // A call blocked on the FIFO would end at the time limit, its worker killed: never, even on a loaded machine.
        for (const result of results) expect(result.code ?? 'ok').not.toMatch(/^tool_(timeout|crashed)$/)
      }
    } finally {
      shell.kill()
    }
    expect(groups).toHaveLength(1) // never killed by a time limit, never crashed
  })

  it('refuses sockets and devices as not regular files', async () => {
    const socketPath = path.join(folders.root, 'sock')
    const server: Server = createServer()
    await new Promise<void>(resolve => server.listen(socketPath, resolve))
    try {
      expect((await attempt(tool('read_file'), { path: 'sock' })).code).toBe('not_a_file')
      expect((await attempt(tool('write_file'), { path: 'sock', content: 'x' })).code).toBe('not_a_file')
    } finally {
      await new Promise(resolve => server.close(resolve))
    }
    execFileSync('mknod', [path.join(folders.root, 'zero'), 'c', '1', '5'])
    expect((await attempt(tool('read_file'), { path: 'zero' })).code).toBe('not_a_file')
  })

  it('reads a 600 MB file without a newline as one cut line, within the time limit', async () => {
    const file = await open(path.join(folders.root, 'huge.txt'), 'w')
    const block = Buffer.alloc(16 * 1024 * 1024, 'a')
    for (let written = 0; written < 600 * 1024 * 1024; written += block.length) await file.write(block)
    await file.close()
    const result = await attempt(tool('read_file'), { path: 'huge.txt' })
    expect(result.code).toBeUndefined()
    expect(result.text).toMatch(/^1\ta{2000}… \[line cut at 2000 characters\]$/)
  }, 60_000)

  it('runs an exponential regex in linear time, and ends one the linear engine cannot run at the time limit', async () => {
    await writeFile(path.join(folders.root, 'a.txt'), `${'a'.repeat(40)}b\n`)
    expect(await attempt(tool('grep'), { pattern: '^(a+)+$' })).toEqual({ text: 'No matches found.' })
    const started = Date.now()
    const backtracking = await attempt(tool('grep'), { pattern: '^(a+)+\\1$' })
    expect(backtracking.code).toBe('tool_timeout')
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 3000)
  }, 20_000)

  it('refuses links out of the workspace without naming their target', async () => {
    await symlink('/etc/passwd', path.join(folders.root, 'passwd'))
    await symlink('/proc/self/fd/0', path.join(folders.root, 'fd'))
    await symlink(folders.outside, path.join(folders.root, 'out'))
    for (const target of ['passwd', 'fd', 'out/canary.txt']) {
      const result = await attempt(tool('read_file'), { path: target })
      expect(result.code).toBe('path_outside_workspace')
      expect(result.text).not.toMatch(/\/etc|\/proc|pipe:|socket:|outside\//)
    }
    expect((await attempt(tool('write_file'), { path: 'out/canary.txt', content: 'pwned' })).code).toBe('path_outside_workspace')
    expect((await attempt(tool('edit_file'), { path: 'out/canary.txt', oldText: 'host', newText: 'pwned' })).code).toBe('path_outside_workspace')
    expect(await readFile(canary, 'utf8')).toBe(CANARY)
  })

  it('refuses writes, edits and persisted outputs past the workspace quota with a clear error', async () => {
    const limitedOptions = { root: folders.root, files: { timeoutMs: TIMEOUT_MS, quotaBytes: 1024 * 1024, ...(sandbox ? { sandbox } : {}) } }
    const limited = new Map(createBuiltinTools(limitedOptions).map(definition => [definition.spec.name, definition]))
    const write = limited.get('write_file') as ToolDef
    expect((await attempt(write, { path: 'fits.txt', content: 'x'.repeat(512 * 1024) })).code).toBeUndefined()
    const refused = await attempt(write, { path: 'more.txt', content: 'x'.repeat(700 * 1024) })
    expect(refused).toMatchObject({ code: 'workspace_quota_exceeded' })
    expect(refused.text).toMatch(/over its quota of 1 MiB/)
    expect((await attempt(limited.get('edit_file') as ToolDef, { path: 'fits.txt', oldText: 'x', newText: 'xxx', replaceAll: true })).code).toBe('workspace_quota_exceeded')
    await expect(workspaceOutputWriter(builtinWorkspace(limitedOptions))('call_9.txt', 'x'.repeat(700 * 1024))).rejects.toMatchObject({ code: 'workspace_quota_exceeded' })
    await expect(stat(path.join(folders.root, 'more.txt'))).rejects.toThrow()
  })

  it('walks a deep tree and a wide folder within bounds', async () => {
    let deep = folders.root
    for (let level = 0; level < 100; level += 1) deep = path.join(deep, 'd')
    await mkdir(deep, { recursive: true })
    await writeFile(path.join(deep, 'bottom.txt'), 'x')
    const glob = await attempt(tool('glob'), { pattern: '**/*.txt' })
    expect(glob.text).toBe('No files match.')
    const wide = path.join(folders.root, 'wide')
    await mkdir(wide)
    for (let index = 0; index < 1500; index += 1) await writeFile(path.join(wide, `f${index}`), '')
    expect((await attempt(tool('list_files'), { path: 'wide' })).text).toMatch(/\[500 more entries not shown/)
  })
})

describe('the file worker', () => {
  const folders = useSandbox()
  afterEach(() => undefined)

  it('answers an error result, not a crash of this process, when its memory bound is hit', async () => {
    await writeFile(path.join(folders.root, 'big.txt'), 'x'.repeat(8 * 1024 * 1024))
    const [, , , , , , edit] = createBuiltinTools({ root: folders.root, files: { timeoutMs: TIMEOUT_MS, memoryMb: 64 } })
    const result = await attempt(edit as ToolDef, { path: 'big.txt', oldText: 'x', newText: 'yy', replaceAll: true })
    expect(result.code).toBe('tool_crashed')
  })
})

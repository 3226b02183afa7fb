import { readFile } from 'node:fs/promises'
import path from 'node:path'
import { beforeEach, describe, expect, it } from 'vitest'
import { shellTool } from '../../../src/tools/builtin/shell-tool'
import { createWorkspace } from '../../../src/tools/builtin/workspace'
import type { Workspace } from '../../../src/tools/builtin/workspace'
import { createToolContext, runTool, textOf, useSandbox } from './tool-context'

/** True while `pid` is a live (non-zombie) process. */
async function isAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0)
  } catch {
    return false
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')
  return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2).charAt(0) !== 'Z'
}

async function readPid(file: string): Promise<number> {
  return Number((await readFile(file, 'utf8')).trim())
}

describe('shell', () => {
  const sandbox = useSandbox()
  let workspace: Workspace

  beforeEach(() => {
    workspace = createWorkspace(sandbox.root)
  })

  it('runs in the workspace root and returns exit code, stdout and stderr', async () => {
    const result = await runTool(shellTool(workspace), { command: 'pwd; echo oops >&2' })
    expect(result.isError).toBeUndefined()
    expect(textOf(result.content)).toBe(`Exit code: 0\nstdout:\n${sandbox.root}\n\nstderr:\noops\n`)
  })

  it('gives the command a minimal environment: HOME is the workspace, only listed host variables pass', async () => {
    process.env.ZIDANE_TEST_MODEL_KEY = 'sk-not-for-tools'
    process.env.ZIDANE_TEST_LISTED = 'listed-value'
    try {
      const result = await runTool(shellTool(workspace, { passEnv: ['ZIDANE_TEST_LISTED'] }), { command: 'env' })
      expect(textOf(result.content)).not.toContain('sk-not-for-tools')
      expect(textOf(result.content)).toContain('ZIDANE_TEST_LISTED=listed-value')
      expect(textOf(result.content)).toContain(`HOME=${sandbox.root}`)
    } finally {
      delete process.env.ZIDANE_TEST_MODEL_KEY
      delete process.env.ZIDANE_TEST_LISTED
    }
  })

  it('reports a non-zero exit as an error result', async () => {
    const result = await runTool(shellTool(workspace), { command: 'echo failing; exit 3' })
    expect(result.isError).toBe(true)
    expect(textOf(result.content)).toBe('Exit code: 3\nstdout:\nfailing\n')
  })

  it('kills the whole process group on timeout', async () => {
    const pidFile = path.join(sandbox.root, 'sleep.pid')
    const started = Date.now()
    const result = await runTool(shellTool(workspace), { command: `sleep 30 & echo $! > ${pidFile}; echo started; wait`, timeoutMs: 500 })
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(result.isError).toBe(true)
    expect(textOf(result.content)).toContain('timed out after 500 ms')
    expect(textOf(result.content)).toContain('started')
    expect(await isAlive(await readPid(pidFile))).toBe(false)
  })

  it('escalates to SIGKILL when the command ignores SIGTERM', async () => {
    const pidFile = path.join(sandbox.root, 'stubborn.pid')
    const tool = shellTool(workspace, { killGraceMs: 200 })
    const result = await runTool(tool, { command: `bash -c 'trap "" TERM; echo $$ > ${pidFile}; while true; do sleep 0.1; done'`, timeoutMs: 500 })
    expect(result.isError).toBe(true)
    expect(await isAlive(await readPid(pidFile))).toBe(false)
  })

  it('caps output, keeping the head and the tail around an omitted-bytes marker', async () => {
    const result = await runTool(shellTool(workspace, { maxOutputBytes: 1000 }), { command: 'seq 1 100000' })
    const text = textOf(result.content)
    expect(text).toMatch(/^Exit code: 0\nstdout:\n1\n2\n3\n/)
    expect(text).toMatch(/\n\[… \d+ bytes omitted …\]\n/)
    expect(text.endsWith('99999\n100000\n')).toBe(true)
    expect(text.length).toBeLessThan(1200)
  })

  it('kills the command when ctx.signal aborts', async () => {
    const pidFile = path.join(sandbox.root, 'abort.pid')
    const controller = new AbortController()
    const started = Date.now()
    const pending = runTool(shellTool(workspace), { command: `echo $$ > ${pidFile}; sleep 30` }, createToolContext({ signal: controller.signal }))
    setTimeout(() => controller.abort(), 300)
    const result = await pending
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(result.isError).toBe(true)
    expect(textOf(result.content)).toContain('aborted')
    expect(await isAlive(await readPid(pidFile))).toBe(false)
  })

  it('refuses a timeout above the configured maximum', async () => {
    const tool = shellTool(workspace, { maxTimeoutMs: 1000, timeoutMs: 500 })
    expect(tool.spec.inputSchema).toMatchObject({ properties: { timeoutMs: { maximum: 1000 } } })
    await expect(runTool(tool, { command: 'true', timeoutMs: 5000 })).rejects.toMatchObject({ code: 'invalid_input' })
  })

  it('returns promptly when a background job keeps the output pipes open', async () => {
    const pidFile = path.join(sandbox.root, 'background.pid')
    const started = Date.now()
    const result = await runTool(shellTool(workspace), { command: `sleep 5 & echo $! > ${pidFile}; echo done` })
    expect(Date.now() - started).toBeLessThan(4000)
    expect(textOf(result.content)).toContain('done')
    process.kill(await readPid(pidFile), 'SIGKILL')
  })
})

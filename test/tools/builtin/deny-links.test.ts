import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { bubblewrapSandbox, isSandboxUsable } from '../../../src/tools/builtin/command-sandbox'
import type { CommandSandbox } from '../../../src/tools/builtin/command-sandbox'
import { fileWorkerStart } from '../../../src/tools/builtin/file-worker-client'
import { runCommand } from '../../../src/tools/builtin/run-command'
import { useSandbox } from './tool-context'

const bwrap = bubblewrapSandbox({ memoryMb: 2048, cpuSeconds: 60, maxProcesses: 200 })
const usable = isSandboxUsable(bwrap, '/tmp')
/** Each tries one way of putting a link (or a moved entry) where `s2` is: the ways a folder above a workspace could be abused. */
const ATTEMPTS = ['ln -s /etc s2', 'ln s1/a.txt s2', 'mv s1 s2']

async function run(command: string, cwd: string, denyLinks: boolean): Promise<number | null> {
  const outcome = await runCommand({ command, cwd, timeoutMs: 20_000, maxOutputBytes: 4096, signal: new AbortController().signal, sandbox: bwrap, wrapOptions: { tenant: 'acme', denyLinks } })
  return outcome.exitCode
}

describe.runIf(usable)('a sandboxed command that may make no link', () => {
  const folders = useSandbox()

  it('cannot make a symbolic or hard link nor rename an entry, where a command without the bound can', async () => {
    for (const command of ATTEMPTS) {
      await mkdir(path.join(folders.root, 's1'), { recursive: true })
      await writeFile(path.join(folders.root, 's1', 'a.txt'), 'a')
      expect(await run(command, folders.root, true), command).not.toBe(0)
      expect(await run(command, folders.root, false), command).toBe(0)
      await run('rm -rf s2', folders.root, false)
    }
  }, 60_000)

  it('is how the file worker starts, and a worker is bound above its workspace only where the sandbox enforces it', () => {
    const root = path.join(folders.root, 'acme', 's1')
    const tenantFolder = path.join(folders.root, 'acme')
    const start = fileWorkerStart(root, { sandbox: bwrap, tenant: 'acme', confineTo: tenantFolder })
    expect(start).toMatchObject({ cwd: tenantFolder, wrapOptions: { denyLinks: true, tenant: 'acme' } })
    const unfiltered: CommandSandbox = { ...bwrap, deniesLinks: false }
    expect(fileWorkerStart(root, { sandbox: unfiltered, tenant: 'acme', confineTo: tenantFolder }).cwd).toBe(root)
  })
})

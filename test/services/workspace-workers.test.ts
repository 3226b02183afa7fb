import { spawn } from 'node:child_process'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { workspacePath } from '../../services/workspace'
import { fileWorkerFolder } from '../../services/workspace-workers'
import { bubblewrapSandbox, isSandboxUsable } from '../../src/tools/builtin/command-sandbox'
import { createFileWorker } from '../../src/tools/builtin/file-worker-client'
import { createFileWorkerPool } from '../../src/tools/builtin/file-worker-pool'
import { useSandbox } from '../tools/builtin/tool-context'

const root = path.resolve('/srv/workspaces')
const workspaceOf = (sessionKey: string): string => path.join(root, ...workspacePath(sessionKey))

describe('the folder a session\'s file worker is confined to', () => {
  it('is the session\'s own workspace, never its tenant\'s folder', () => {
    expect(fileWorkerFolder(workspaceOf('acme~s1'))).toBe(workspaceOf('acme~s1'))
    expect(fileWorkerFolder(workspaceOf('acme~s1:child-1'))).toBe(workspaceOf('acme~s1:child-1'))
    expect(fileWorkerFolder(workspaceOf('s1'))).toBe(workspaceOf('s1'))
  })
})

const bwrap = bubblewrapSandbox({ memoryMb: 2048, cpuSeconds: 60, maxProcesses: 200 })
/** Swaps `d` between a real folder and a link to the tenant's other session, as fast as it can (the session's own shell could). */
const FLIP = `const fs=require('fs');process.chdir(process.argv[1]);for(;;){for(const [a,b] of [['d','real'],['sym','d'],['d','sym'],['real','d']]){try{fs.renameSync(a,b)}catch{}}}`

describe.runIf(isSandboxUsable(bwrap, '/tmp'))('a session of a tenant racing its own links against its file worker', () => {
  const folders = useSandbox()
  it('never reads another session\'s file through a link swapped in between the check and the open', async () => {
    const tenant = path.join(folders.root, 'acme')
    const a = path.join(tenant, 's1')
    const b = path.join(tenant, 's2')
    await mkdir(path.join(a, 'd'), { recursive: true })
    await mkdir(b, { recursive: true })
    await writeFile(path.join(a, 'd', 'secret.txt'), 'decoy\n')
    await writeFile(path.join(b, 'secret.txt'), 'B-SECRET\n')
    await symlink('../s2', path.join(a, 'sym'))
    const pool = createFileWorkerPool()
    const read = createFileWorker(a, { sandbox: bwrap, tenant: 'acme', confineTo: fileWorkerFolder(a), pool })
    const flipper = spawn(process.execPath, ['-e', FLIP, a], { stdio: 'ignore' })
    let leaked = 0
    let calls = 0
    const deadline = Date.now() + 4_000
    try {
      while (Date.now() < deadline && leaked === 0) {
        calls += 1
        const text = await read({ op: 'read', path: 'd/secret.txt', offset: 1, limit: 5 }, new AbortController().signal).catch(() => '')
        if (text.includes('B-SECRET')) leaked += 1
      }
    } finally {
      flipper.kill('SIGKILL')
      pool.close()
    }
    expect(leaked).toBe(0)
    expect(calls).toBeGreaterThan(50) // the race was run, not skipped
  }, 30_000)
})

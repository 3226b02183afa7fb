import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { workspacePath } from '../../services/workspace'
import { createServicesFileWorkers, FILE_WORKERS_PER_TENANT, fileWorkerBoundsOf, fileWorkerFolder, SERVICES_FILE_WORKERS } from '../../services/workspace-workers'
import { bubblewrapSandbox, isSandboxUsable } from '../../src/tools/builtin/command-sandbox'
import { createFileWorker } from '../../src/tools/builtin/file-worker-client'
import { createFileWorkerPool } from '../../src/tools/builtin/file-worker-pool'
import type { FileWorkerPool } from '../../src/tools/builtin/file-worker-pool'
import { useSandbox } from '../tools/builtin/tool-context'

const root = path.resolve('/srv/workspaces')
const workspaceOf = (sessionKey: string): string => path.join(root, ...workspacePath(sessionKey))

describe('the folder a session\'s file worker is confined to', () => {
  it('is its tenant\'s folder, shared by the tenant\'s sessions and sub-agents', () => {
    expect(fileWorkerFolder(root, workspaceOf('acme~s1'))).toBe(path.join(root, 'acme'))
    expect(fileWorkerFolder(root, workspaceOf('acme~s1:child-1'))).toBe(path.join(root, 'acme'))
  })

  it('is the workspace itself for a session whose key names no tenant: such sessions share no worker', () => {
    expect(fileWorkerFolder(root, workspaceOf('s1'))).toBe(workspaceOf('s1'))
    expect(path.dirname(workspaceOf('s1'))).toBe(path.join(root, '%'))
  })

  it('is the workspace itself when that is a flat folder beside the tenants\' folders', () => {
    expect(fileWorkerFolder(root, path.join(root, 'acme_7Es1'))).toBe(path.join(root, 'acme_7Es1'))
    expect(fileWorkerFolder(root, '/elsewhere/acme/s1')).toBe('/elsewhere/acme/s1')
  })
})

describe('the bounds of the services\' file workers', () => {
  it('hold a tenant to 16 live workers unless ZIDANE_FILE_WORKERS_PER_TENANT says otherwise', () => {
    expect(SERVICES_FILE_WORKERS.maxWorkersPerTenant).toBe(FILE_WORKERS_PER_TENANT)
    expect(FILE_WORKERS_PER_TENANT).toBe(16)
    expect(fileWorkerBoundsOf({ ZIDANE_FILE_WORKERS_PER_TENANT: '8' })).toEqual({ maxWorkersPerTenant: 8, maxWorkersPerScope: 8 })
    for (const value of [undefined, '', '0', '-3', '2.5', 'many']) expect(fileWorkerBoundsOf({ ZIDANE_FILE_WORKERS_PER_TENANT: value })).toEqual({})
  })
})

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!condition() && Date.now() < deadline) await sleep(25)
  return condition()
}

const bwrap = bubblewrapSandbox({ memoryMb: 2048, cpuSeconds: 60, maxProcesses: 200 })
/** Swaps `d` between a real folder and a link to the tenant's other session, as fast as it can (the session's own shell could). */
const FLIP = `const fs=require('fs');process.chdir(process.argv[1]);for(;;){for(const [a,b] of [['d','real'],['sym','d'],['d','sym'],['real','d']]){try{fs.renameSync(a,b)}catch{}}}`

describe.runIf(isSandboxUsable(bwrap, '/tmp'))('a session of a tenant racing its own links against its file worker', () => {
  const folders = useSandbox()
  it('never reads, writes, lists or searches another session\'s files through a link swapped in mid-call', async () => {
    const tenant = path.join(folders.root, 'acme')
    const a = path.join(tenant, 's1')
    const b = path.join(tenant, 's2')
    await mkdir(path.join(a, 'd'), { recursive: true })
    await mkdir(b, { recursive: true })
    await writeFile(path.join(a, 'd', 'secret.txt'), 'decoy\n')
    await writeFile(path.join(b, 'secret.txt'), 'B-SECRET\n')
    await writeFile(path.join(b, 'b-only.txt'), 'B-SECRET\n')
    await symlink('../s2', path.join(a, 'sym'))
    const pool = createFileWorkerPool()
    // One worker for the tenant's folder, as the services confine it: only the worker's opens keep it in `s1`.
    const worker = createFileWorker(a, { sandbox: bwrap, tenant: 'acme', confineTo: fileWorkerFolder(folders.root, a), pool })
    const operations = [
      { op: 'read', path: 'd/secret.txt', offset: 1, limit: 5 },
      { op: 'write', path: 'd/written.txt', content: 'from s1' },
      { op: 'list', path: 'd' },
      { op: 'grep', path: 'd', pattern: 'SECRET' },
      { op: 'glob', path: 'd', pattern: '*' },
    ] as const
    const flipper = spawn(process.execPath, ['-e', FLIP, a], { stdio: 'ignore' })
    const leaks: string[] = []
    let calls = 0
    const deadline = Date.now() + 5_000
    try {
      while (Date.now() < deadline && leaks.length === 0) {
        const operation = operations[calls % operations.length] as (typeof operations)[number]
        calls += 1
        const text = await worker(operation, new AbortController().signal).catch(() => '')
        if (/B-SECRET|b-only/.test(text)) leaks.push(`${operation.op}: ${text}`)
        if (existsSync(path.join(b, 'written.txt'))) leaks.push(`${operation.op}: wrote into s2`)
      }
    } finally {
      flipper.kill('SIGKILL')
      pool.close()
    }
    expect(leaks).toEqual([])
    expect(calls).toBeGreaterThan(100) // the race was run, not skipped
  }, 30_000)
})

/** A grep that backtracks without end (a backreference: V8's linear engine cannot take over), so it runs until the call's time limit. */
const HANGING_GREP = { op: 'grep', path: '.', pattern: '^(a+)+\\1$' } as const
const HANG_TIMEOUT_MS = 8_000

describe.runIf(isSandboxUsable(bwrap, '/tmp'))('a tenant keeping its file workers busy', () => {
  const folders = useSandbox()
  /** The services' pool, scaled down: the process cap (4) is one tenant's bound (4), shared by its sessions. */
  const bounds = { maxWorkers: 4, maxWorkersPerScope: 4, maxWorkersPerTenant: 4 }
  /** A file worker of session `name` of `tenant`, its workspace holding a file the hanging grep backtracks on. */
  const session = async (pool: FileWorkerPool, tenant: string, name: string): Promise<ReturnType<typeof createFileWorker>> => {
    const workspace = path.join(folders.root, tenant, name)
    await mkdir(workspace, { recursive: true })
    await writeFile(path.join(workspace, 'a.txt'), `${'a'.repeat(48)}b\n`)
    return createFileWorker(workspace, { sandbox: bwrap, tenant, confineTo: fileWorkerFolder(folders.root, workspace), pool, timeoutMs: HANG_TIMEOUT_MS })
  }
  const hang = (run: ReturnType<typeof createFileWorker>, settled: { count: number }): Promise<string> =>
    run(HANGING_GREP, new AbortController().signal).then(() => 'answered', (error: { code: string }) => error.code).finally(() => { settled.count += 1 })

  it('never stalls another tenant\'s call: it starts at once while every worker of the first is busy', async () => {
    const pool = createServicesFileWorkers(bounds)
    try {
      const attacker = await Promise.all(['s1', 's2'].map(name => session(pool, 'acme', name)))
      const settled = { count: 0 }
      const hanging = attacker.flatMap(run => [hang(run, settled), hang(run, settled)])
      expect(await until(() => pool.liveWorkers() === 4, 5_000)).toBe(true)
      const victim = await session(pool, 'globex', 's1')
      const asked = Date.now()
      const listed = await victim({ op: 'list', path: '.' }, new AbortController().signal)
      const waitedMs = Date.now() - asked
      expect(listed).toContain('a.txt')
      expect(waitedMs).toBeLessThan(2_000)
      expect(settled.count).toBe(0) // acme's calls were all still busy
      expect(await Promise.all(hanging)).toEqual(['tool_timeout', 'tool_timeout', 'tool_timeout', 'tool_timeout'])
    } finally {
      pool.close()
    }
  }, 60_000)

  it('keeps a tenant within its own bound: its extra call waits for one of its own workers', async () => {
    // Room in the process for more: only the tenant's bound holds its fifth call.
    const pool = createServicesFileWorkers({ ...bounds, maxWorkers: 8 })
    try {
      const attacker = await Promise.all(['s1', 's2', 's3'].map(name => session(pool, 'acme', name)))
      const settled = { count: 0 }
      const hanging = attacker.slice(0, 2).flatMap(run => [hang(run, settled), hang(run, settled)])
      expect(await until(() => pool.liveWorkers('acme') === 4, 5_000)).toBe(true)
      const asked = Date.now()
      const extra = (attacker[2] as ReturnType<typeof createFileWorker>)({ op: 'list', path: '.' }, new AbortController().signal)
      await sleep(1_000)
      expect(pool.liveWorkers('acme')).toBe(4)
      expect(await extra).toContain('a.txt')
      // It started only once a worker of its own tenant ended, at the hanging calls' time limit.
      expect(settled.count).toBeGreaterThan(0)
      expect(Date.now() - asked).toBeGreaterThan(HANG_TIMEOUT_MS - 2_000)
      await Promise.all(hanging)
    } finally {
      pool.close()
    }
  }, 60_000)
})

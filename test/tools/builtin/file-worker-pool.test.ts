import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { isSandboxUsable } from '../../../src/tools/builtin/command-sandbox'
import { createFileWorker, fileWorkerStart } from '../../../src/tools/builtin/file-worker-client'
import type { FileWorker, FileWorkerOptions } from '../../../src/tools/builtin/file-worker-client'
import { createFileWorkerPool } from '../../../src/tools/builtin/file-worker-pool'
import type { FileWorkerPool, FileWorkerPoolOptions } from '../../../src/tools/builtin/file-worker-pool'
import { exchange } from '../../../src/tools/builtin/file-worker-process'
import type { WarmWorker } from '../../../src/tools/builtin/file-worker-process'
import type { StartCommandOptions } from '../../../src/tools/builtin/run-command'
import { groupHasProcesses } from '../../../src/tools/builtin/run-command'
import { sandboxModes, testSandbox, useSandbox } from './tool-context'

const bwrap = testSandbox
const modes = sandboxModes()

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!condition() && Date.now() < deadline) await sleep(25)
  return condition()
}

const signal = (): AbortSignal => new AbortController().signal

describe.each(modes)('a shared file worker pool, %s', (_mode, sandbox) => {
  const folders = useSandbox()
  const started: Array<number | undefined> = []
  let pool: FileWorkerPool | undefined
  const usePool = (options: FileWorkerPoolOptions = {}): FileWorkerPool => {
    started.length = 0
    pool = createFileWorkerPool({ onWorkerStart: group => started.push(group), ...options })
    return pool
  }
  afterEach(() => pool?.close())
  const shared = (): FileWorkerPool => {
    if (pool === undefined) throw new Error('no pool')
    return pool
  }
  /** A session workspace `<root>/<tenant>/<session>`, its worker confined to the tenant's folder. */
  const session = async (tenant: string, name: string, options: FileWorkerOptions = {}): Promise<{ run: FileWorker; root: string }> => {
    const root = path.join(folders.root, tenant, name)
    await mkdir(root, { recursive: true })
    const run = createFileWorker(root, { ...(sandbox ? { sandbox } : {}), tenant, confineTo: path.join(folders.root, tenant), pool: shared(), ...options })
    return { run, root }
  }

  it('hands the room of a session whose run ended to its tenant\'s next session at once, not after evictAfterMs', async () => {
    usePool({ maxWorkersPerTenant: 1, evictAfterMs: 60_000, idleMs: 60_000 })
    const own = (name: string): FileWorkerOptions => ({ confineTo: path.join(folders.root, 'acme', name) })
    const first = await session('acme', 's1', own('s1'))
    const second = await session('acme', 's2', own('s2'))
    await first.run({ op: 'write', path: 'a.txt', content: 'first\n' }, signal())
    let done = false
    const waiting = second.run({ op: 'write', path: 'a.txt', content: 'second\n' }, signal()).finally(() => { done = true })
    await sleep(300)
    // The first session's worker is idle but its run may go on: it is not taken from it.
    expect(done).toBe(false)
    expect(started).toHaveLength(1)
    shared().settle(first.root)
    expect(await until(() => done, 3_000)).toBe(true)
    await waiting
    expect(started).toHaveLength(2)
    expect(shared().liveWorkers('acme')).toBe(1)
    expect(await readFile(path.join(second.root, 'a.txt'), 'utf8')).toBe('second\n')
  })

  it('serves the calls of two workspaces of one tenant from one worker process', async () => {
    usePool()
    const first = await session('acme', 's1')
    const second = await session('acme', 's2')
    await first.run({ op: 'write', path: 'a.txt', content: 'first\n' }, signal())
    await second.run({ op: 'write', path: 'a.txt', content: 'second\n' }, signal())
    expect(started).toHaveLength(1)
    expect(groupHasProcesses(started[0])).toBe(true)
    // Each call still works in its own workspace.
    expect(await readFile(path.join(first.root, 'a.txt'), 'utf8')).toBe('first\n')
    expect(await readFile(path.join(second.root, 'a.txt'), 'utf8')).toBe('second\n')
    expect(await second.run({ op: 'read', path: '../s1/a.txt', offset: 1, limit: 10 }, signal()).catch((error: { code: string }) => error.code)).toBe('path_outside_workspace')
  }, 30_000)

  it('never hands a worker of one tenant to a workspace of another', async () => {
    usePool()
    const acme = await session('acme', 's1')
    const other = await session('globex', 's1')
    await acme.run({ op: 'list', path: '.' }, signal())
    await other.run({ op: 'list', path: '.' }, signal())
    expect(started).toHaveLength(2)
    expect(started[1]).not.toBe(started[0])
    // The same folder under another tenant's name (its cgroup limits) is another worker too.
    const impostor = createFileWorker(acme.root, { ...(sandbox ? { sandbox } : {}), tenant: 'globex', confineTo: path.join(folders.root, 'acme'), pool: shared() })
    await impostor({ op: 'list', path: '.' }, signal())
    expect(started).toHaveLength(3)
  }, 30_000)

  it('refuses a workspace outside the folder its worker would be confined to', async () => {
    usePool()
    const stray = (): FileWorker => createFileWorker(path.join(folders.root, 'globex', 's1'), { ...(sandbox ? { sandbox } : {}), tenant: 'acme', confineTo: path.join(folders.root, 'acme'), pool: shared() })
    expect(stray).toThrow(expect.objectContaining({ code: 'invalid_workspace' }) as Error)
    expect(started).toHaveLength(0)
  }, 30_000)

  it('kills a worker idle past its idle time', async () => {
    const workers = usePool({ idleMs: 300 })
    const { run } = await session('acme', 's1')
    await run({ op: 'list', path: '.' }, signal())
    expect(await until(() => !groupHasProcesses(started[0]), 5000)).toBe(true)
    expect(workers.liveWorkers()).toBe(0)
    await run({ op: 'list', path: '.' }, signal())
    expect(started).toHaveLength(2)
  }, 30_000)

  it('serves one call at a time from the worker idle the shortest, so a worker a burst started and no longer needs idles out', async () => {
    const workers = usePool({ idleMs: 600 })
    const { run } = await session('acme', 's1')
    // A burst of four at once starts four workers.
    await Promise.all([1, 2, 3, 4].map(index => run({ op: 'write', path: `b${index}.txt`, content: 'x' }, signal())))
    expect(started).toHaveLength(4)
    // Then one call at a time, every 100 ms: taking turns among the four, each would be reused before its idle time.
    for (let call = 0; call < 15; call++) {
      await run({ op: 'list', path: '.' }, signal())
      await sleep(100)
    }
    expect(workers.liveWorkers()).toBe(1)
    expect(started).toHaveLength(4)
  }, 30_000)

  it('keeps the live workers of a tenant within its cap, its calls waiting for one', async () => {
    const workers = usePool({ maxWorkersPerScope: 2 })
    const sessions = await Promise.all(['s1', 's2', 's3', 's4', 's5', 's6'].map(name => session('acme', name)))
    let most = 0
    const calls = sessions.flatMap(({ run }) => [1, 2, 3].map(async index => {
      const written = await run({ op: 'write', path: `f${index}.txt`, content: `${index}\n` }, signal())
      most = Math.max(most, workers.liveWorkers())
      return written
    }))
    expect(await Promise.all(calls)).toHaveLength(18)
    expect(started.length).toBeLessThanOrEqual(2)
    expect(most).toBeLessThanOrEqual(2)
  }, 60_000)

  it('makes room under its process cap by killing the idle worker of another tenant unused the longest', async () => {
    const workers = usePool({ maxWorkers: 1, evictAfterMs: 0 })
    const acme = await session('acme', 's1')
    const globex = await session('globex', 's1')
    await acme.run({ op: 'list', path: '.' }, signal())
    await globex.run({ op: 'list', path: '.' }, signal())
    expect(started).toHaveLength(2)
    expect(workers.liveWorkers()).toBe(1)
    expect(await until(() => !groupHasProcesses(started[0]), 3000)).toBe(true)
  }, 30_000)

  it('starts a call of another tenant at once past its process cap rather than kill a worker idle for less than evictAfterMs, then trims back to the cap', async () => {
    const workers = usePool({ maxWorkers: 1, evictAfterMs: 1500 })
    const acme = await session('acme', 's1')
    const globex = await session('globex', 's1')
    await acme.run({ op: 'list', path: '.' }, signal())
    const asked = Date.now()
    await globex.run({ op: 'list', path: '.' }, signal())
    expect(Date.now() - asked).toBeLessThan(1000)
    expect(workers.liveWorkers()).toBe(2)
    // Once idle 1.5 s, the least recently used one (acme's) goes.
    expect(await until(() => workers.liveWorkers() === 1, 5000)).toBe(true)
    expect(await until(() => !groupHasProcesses(started[0]), 3000)).toBe(true)
    expect(groupHasProcesses(started[1])).toBe(true)
  }, 30_000)

  it('gives another tenant a worker at once while one tenant holds every worker of the process, and holds that tenant to its own bound', async () => {
    const workers = usePool({ maxWorkers: 2, maxWorkersPerTenant: 2 })
    const startOf = async (tenant: string, name: string): Promise<StartCommandOptions> => {
      const root = path.join(folders.root, tenant, name)
      await mkdir(root, { recursive: true })
      return fileWorkerStart(root, { ...(sandbox ? { sandbox } : {}), tenant, confineTo: path.join(folders.root, tenant) })
    }
    const held = [await workers.acquire(await startOf('acme', 's1'), signal()), await workers.acquire(await startOf('acme', 's2'), signal())]
    const asked = Date.now()
    workers.release(await workers.acquire(await startOf('globex', 's1'), signal()), true)
    expect(Date.now() - asked).toBeLessThan(2000)
    expect(workers.liveWorkers('globex')).toBe(1)
    // acme's third workspace waits for one of acme's own workers, though globex's is idle.
    let third: WarmWorker | undefined
    const waiting = workers.acquire(await startOf('acme', 's3'), signal()).then(worker => { third = worker })
    await sleep(700)
    expect(third).toBeUndefined()
    expect(workers.liveWorkers('acme')).toBe(2)
    workers.release(held[0] as WarmWorker, true)
    await waiting
    expect(workers.liveWorkers('acme')).toBe(2)
    workers.release(held[1] as WarmWorker, false)
    workers.release(third as WarmWorker, false)
  }, 30_000)

  it('fails a call waiting for a worker when it is aborted', async () => {
    usePool({ maxWorkersPerScope: 1 })
    const { run } = await session('acme', 's1')
    await writeFile(path.join(folders.root, 'acme', 's1', 'a.txt'), `${'a'.repeat(40)}b\n`)
    const slow = run({ op: 'grep', path: '.', pattern: '^(a+)+\\1$' }, signal()).catch((error: { code: string }) => error.code)
    const controller = new AbortController()
    const waiting = run({ op: 'list', path: '.' }, controller.signal)
    setTimeout(() => controller.abort(), 300)
    await expect(waiting).rejects.toMatchObject({ code: 'aborted' })
    pool?.close()
    expect(await slow).toBe('tool_crashed')
  }, 30_000)
})

if (isSandboxUsable(bwrap, '/tmp')) {
  describe('a tenant\'s shared worker in the bubblewrap sandbox', () => {
    const folders = useSandbox()

    it('cannot reach another tenant\'s folder, even when a request names it as its root', async () => {
      const pool = createFileWorkerPool()
      try {
        const acme = path.join(folders.root, 'acme', 's1')
        const globex = path.join(folders.root, 'globex', 's1')
        await mkdir(acme, { recursive: true })
        await mkdir(globex, { recursive: true })
        await writeFile(path.join(globex, 'secret.txt'), 'globex canary\n')
        const options = { sandbox: bwrap, tenant: 'acme', confineTo: path.join(folders.root, 'acme'), pool }
        await createFileWorker(acme, options)({ op: 'list', path: '.' }, signal())
        // The warm worker of acme's folder, asked directly (as a compromised client would) for globex's workspace.
        const worker = await pool.acquire(fileWorkerStart(acme, options), signal())
        expect(pool.liveWorkers()).toBe(1)
        const read = await exchange(worker, JSON.stringify({ op: 'read', root: globex, path: 'secret.txt', offset: 1, limit: 10 }), 10_000, signal())
        pool.release(worker, false)
        expect(read.kind).toBe('reply')
        expect(JSON.stringify(read)).not.toContain('globex canary')
        expect(read).toMatchObject({ reply: { ok: false } })
      } finally {
        pool.close()
      }
    }, 30_000)
  })
}

import { mkdir, readFile, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { createFileWorker } from '../../../src/tools/builtin/file-worker-client'
import { createFileWorkerPool } from '../../../src/tools/builtin/file-worker-pool'
import type { FileWorker, FileWorkerOptions } from '../../../src/tools/builtin/file-worker-client'
import { groupHasProcesses, stopRunningCommands } from '../../../src/tools/builtin/run-command'
import { sandboxModes, useSandbox } from './tool-context'

const modes = sandboxModes()

async function until(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (!condition() && Date.now() < deadline) await sleep(25)
  return condition()
}

describe.each(modes)('the file worker client, %s', (_mode, sandbox) => {
  const folders = useSandbox()
  const started: Array<number | undefined> = []
  const worker = (options: FileWorkerOptions = {}): FileWorker => {
    started.length = 0
    return createFileWorker(folders.root, { ...(sandbox ? { sandbox } : {}), onWorkerStart: group => started.push(group), ...options })
  }
  const signal = (): AbortSignal => new AbortController().signal

  it('serves a second call from the same warm worker process', async () => {
    const run = worker()
    await run({ op: 'write', path: 'a.txt', content: 'one\n' }, signal())
    expect(await run({ op: 'read', path: 'a.txt', offset: 1, limit: 10 }, signal())).toContain('one')
    expect(await run({ op: 'list', path: '.' }, signal())).toContain('a.txt')
    expect(started).toHaveLength(1)
    expect(groupHasProcesses(started[0])).toBe(true)
  }, 30_000)

  it('starts one worker for the sequential calls of each session, sessions running at once through a shared pool', async () => {
    // The services' bounds (30 s idle, 4 per workspace, 32 in all): ten sessions of ten sequential writes each, as a burst of demo runs.
    const pool = createFileWorkerPool({ idleMs: 30_000, maxWorkersPerScope: 4, maxWorkers: 32, onWorkerStart: group => started.push(group) })
    started.length = 0
    try {
      const session = async (index: number): Promise<void> => {
        const root = path.join(folders.root, `s${index}`)
        await mkdir(root)
        const run = createFileWorker(root, { ...(sandbox ? { sandbox } : {}), tenant: 'acme', confineTo: root, pool })
        for (let call = 0; call < 10; call += 1) await run({ op: 'write', path: `notes/file-${call}.txt`, content: `line ${call}\n` }, signal())
      }
      await Promise.all(Array.from({ length: 10 }, (_, index) => session(index)))
      expect(started).toHaveLength(10)
      expect(await readFile(path.join(folders.root, 's9', 'notes', 'file-9.txt'), 'utf8')).toBe('line 9\n')
    } finally {
      pool.close()
    }
  }, 60_000)

  it('carries a request and a reply larger than a pipe holds', async () => {
    const run = worker()
    const content = `${'x'.repeat(99)}\n`.repeat(10_000)
    expect(await run({ op: 'write', path: 'big.txt', content }, signal())).toContain('1000000 bytes')
    expect(await run({ op: 'read', path: 'big.txt', offset: 1, limit: 2000 }, signal())).toContain('x'.repeat(99))
    expect(started).toHaveLength(1)
  }, 30_000)

  it('kills a worker whose call times out and serves the next call from a new one', async () => {
    await writeFile(path.join(folders.root, 'a.txt'), `${'a'.repeat(40)}b\n`)
    const run = worker({ timeoutMs: 2000 })
    await run({ op: 'list', path: '.' }, signal())
    await expect(run({ op: 'grep', path: '.', pattern: '^(a+)+\\1$' }, signal())).rejects.toMatchObject({ code: 'tool_timeout' })
    expect(await until(() => !groupHasProcesses(started[0]), 3000)).toBe(true)
    expect(await run({ op: 'list', path: '.' }, signal())).toContain('a.txt')
    expect(started).toHaveLength(2)
    expect(started[1]).not.toBe(started[0])
  }, 30_000)

  it('kills the worker of an aborted call and answers the next call', async () => {
    await writeFile(path.join(folders.root, 'a.txt'), `${'a'.repeat(40)}b\n`)
    const run = worker()
    const controller = new AbortController()
    const call = run({ op: 'grep', path: '.', pattern: '^(a+)+\\1$' }, controller.signal)
    setTimeout(() => controller.abort(), 1500)
    await expect(call).rejects.toMatchObject({ code: 'aborted' })
    expect(await until(() => !groupHasProcesses(started[0]), 3000)).toBe(true)
    expect(await run({ op: 'list', path: '.' }, signal())).toContain('a.txt')
    expect(started).toHaveLength(2)
  }, 30_000)

  it('ends an idle worker after the idle time', async () => {
    const run = worker({ idleMs: 300 })
    await run({ op: 'list', path: '.' }, signal())
    expect(groupHasProcesses(started[0])).toBe(true)
    expect(await until(() => !groupHasProcesses(started[0]), 5000)).toBe(true)
    await run({ op: 'list', path: '.' }, signal())
    expect(started).toHaveLength(2)
  }, 30_000)

  it('answers concurrent calls in separate workers and keeps one idle', async () => {
    const run = worker()
    const writes = Array.from({ length: 3 }, (_, index) => run({ op: 'write', path: `f${index}.txt`, content: `file ${index}\n` }, signal()))
    expect(await Promise.all(writes)).toHaveLength(3)
    expect(started.length).toBeGreaterThanOrEqual(2)
    expect(await until(() => started.filter(groupHasProcesses).length === 1, 3000)).toBe(true)
    expect(await run({ op: 'list', path: '.' }, signal())).toMatch(/f0\.txt[\s\S]*f1\.txt[\s\S]*f2\.txt/)
  }, 30_000)

  it('drops a worker that died while idle and serves the next call from a new one', async () => {
    const run = worker()
    await run({ op: 'list', path: '.' }, signal())
    const group = started[0]
    if (group === undefined) throw new Error('no worker started')
    process.kill(-group, 'SIGKILL')
    await until(() => !groupHasProcesses(started[0]), 3000)
    expect(await run({ op: 'list', path: '.' }, signal())).toBeTypeOf('string')
    expect(started).toHaveLength(2)
  }, 30_000)

  it('fails a call whose worker dies before answering with tool_crashed', async () => {
    const run = worker({ memoryMb: 64 })
    await expect(run({ op: 'list', path: '.' }, signal())).rejects.toMatchObject({ code: 'tool_crashed' })
    expect(await until(() => !groupHasProcesses(started[0]), 3000)).toBe(true)
  }, 30_000)

  it('stops its warm workers at shutdown with the running commands', async () => {
    const run = worker()
    await run({ op: 'list', path: '.' }, signal())
    stopRunningCommands()
    expect(await until(() => !groupHasProcesses(started[0]), 3000)).toBe(true)
  }, 30_000)
})

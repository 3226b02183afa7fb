import { appendFileSync, readdirSync, statSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { stepKey } from '../../src/durable/runtime'
import { createFileCrashLog, takeSuspectTurn } from '../../src/restate/crash-log'
import type { StepCrashLog } from '../../src/restate/crash-log'
import { restateRuntime } from '../../src/restate/runtime'
import { createFakeObjectContext } from '../helpers/restate/fake-context'

const folders: string[] = []
afterEach(async () => { for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true }) })
async function folder(): Promise<string> {
  const made = await mkdtemp(join(tmpdir(), 'zidane-crashes-'))
  folders.push(made)
  return join(made, 'crashes')
}

/** A runtime on a fake context of invocation `inv_1` whose steps are guarded by `log`. */
function guarded(log: StepCrashLog, maxCrashes = 3): ReturnType<typeof restateRuntime> {
  return restateRuntime({ ...createFakeObjectContext(), request: () => ({ id: 'inv_1' }) }, { crashGuard: { log, maxCrashes, suspectWaitMs: 5_000 } })
}

describe('the file crash log', () => {
  it('keeps a running step counted for a later instance (the next process) until the step is forgotten', async () => {
    const path = await folder()
    await createFileCrashLog(path).starting('inv_1', 'run_1/t0/toolu_1/tool', 0)
    const later = createFileCrashLog(path)
    expect(await later.crashes('inv_1', 'run_1/t0/toolu_1/tool')).toBe(1)
    expect(await later.crashes('inv_2', 'run_1/t0/toolu_1/tool')).toBe(0)
    await later.starting('inv_1', 'run_1/t0/toolu_1/tool', 1)
    expect(await later.crashes('inv_1', 'run_1/t0/toolu_1/tool')).toBe(2)
    await later.forget('inv_1', 'run_1/t0/toolu_1/tool')
    await later.forget('inv_1', 'never started')
    expect(await later.crashes('inv_1', 'run_1/t0/toolu_1/tool')).toBe(0)
    await expect.poll(() => readdirSync(path), { timeout: 5_000 }).toEqual([])
  })

  it('creates one file per invocation, not one per step, and removes it once no step runs', async () => {
    const path = await folder()
    const log = createFileCrashLog(path)
    await log.starting('inv_1', 'run_1/t0/model', 0)
    const [file] = readdirSync(path)
    const inode = statSync(join(path, file ?? '')).ino
    for (let turn = 0; turn < 200; turn++) {
      await log.forget('inv_1', `run_1/t${turn}/model`)
      await log.starting('inv_1', `run_1/t${turn}/toolu_${turn}/tool`, 0)
      await log.forget('inv_1', `run_1/t${turn}/toolu_${turn}/tool`)
      await log.starting('inv_1', `run_1/t${turn + 1}/model`, 0)
      expect(readdirSync(path)).toEqual([file])
    }
    // Rewritten with its running steps (through a file beside it, renamed over it) once past 16 KiB: bounded.
    expect(statSync(join(path, file ?? '')).size).toBeLessThan(17 * 1024)
    expect(statSync(join(path, file ?? '')).ino).not.toBe(inode)
    expect(await createFileCrashLog(path).crashes('inv_1', 'run_1/t200/model')).toBe(1)
    expect(await createFileCrashLog(path).crashes('inv_1', 'run_1/t199/toolu_199/tool')).toBe(0)
    await log.forget('inv_1', 'run_1/t200/model')
    expect(readdirSync(path)).toEqual([file]) // the next step usually follows at once
    await expect.poll(() => readdirSync(path), { timeout: 5_000 }).toEqual([])
  })

  it('reads a count past a line torn by the crash it records', async () => {
    const path = await folder()
    await createFileCrashLog(path).starting('inv_1', 'run_1/t0/toolu_1/tool', 0)
    const [file] = readdirSync(path)
    appendFileSync(join(path, file ?? ''), '["S","run_1/t0/tool')
    expect(await createFileCrashLog(path).crashes('inv_1', 'run_1/t0/toolu_1/tool')).toBe(1)
  })

  it('counts a start appended after a torn line, so a step that keeps crashing is still bounded', async () => {
    const path = await folder()
    const step = 'run_1/t0/toolu_1/tool'
    await createFileCrashLog(path).starting('inv_1', step, 0)
    const [file] = readdirSync(path)
    appendFileSync(join(path, file ?? ''), '["S","run_1/t0/tool') // the crash tore its own write
    await createFileCrashLog(path).starting('inv_1', step, 1)
    expect(await createFileCrashLog(path).crashes('inv_1', step)).toBe(2)
  })

  it('keeps each step\'s count apart whatever its name holds: line ends, quotes, a forged entry, lone surrogates', async () => {
    const path = await folder()
    const names = ['a\nb', 'x\r\n["F","a\\nb"]', '\u2028\u2029', '\udc00lone', '"]\n["S","victim",99]', '\0nul', 'é'.repeat(100)]
    const log = createFileCrashLog(path)
    for (const name of names) await log.starting('inv_1', name, 2)
    const later = createFileCrashLog(path)
    for (const name of names) expect(await later.crashes('inv_1', name)).toBe(3)
    expect(await later.crashes('inv_1', 'victim')).toBe(0)
    expect(await later.crashes('inv_1', 'a')).toBe(0)
  })

  it('counts the starts another process appended since this one read the file', async () => {
    const path = await folder()
    const step = 'run_1/t0/toolu_1/tool'
    const here = createFileCrashLog(path)
    const elsewhere = createFileCrashLog(path)
    await here.starting('inv_1', step, 0) // an attempt aborted as its step ran
    await elsewhere.starting('inv_1', step, await elsewhere.crashes('inv_1', step)) // its retry on another replica, which dies in it
    expect(await here.crashes('inv_1', step)).toBe(2) // the next retry, back here
    await here.starting('inv_1', step, 2)
    expect(await createFileCrashLog(path).crashes('inv_1', step)).toBe(3)
  })

  it('leaves the file of an invocation another process has appended to since', async () => {
    const path = await folder()
    const here = createFileCrashLog(path)
    const elsewhere = createFileCrashLog(path)
    await here.starting('inv_1', 'run_1/t0/model', 0)
    await here.forget('inv_1', 'run_1/t0/model')
    // The invocation goes on elsewhere within the second this process keeps the file; that process dies in the step.
    await elsewhere.starting('inv_1', 'run_1/t0/toolu_1/tool', 0)
    await new Promise(resolve => setTimeout(resolve, 1_500))
    expect(await createFileCrashLog(path).crashes('inv_1', 'run_1/t0/toolu_1/tool')).toBe(1)
  })

  it('removes the file once no step is counted, after a write torn inside a character', async () => {
    const path = await folder()
    await createFileCrashLog(path).starting('inv_1', 'run_1/t0/toolu_é/tool', 0)
    const [file] = readdirSync(path)
    appendFileSync(join(path, file ?? ''), Buffer.from('["S","run_1/t0/toolu_é').subarray(0, -1))
    const log = createFileCrashLog(path)
    await log.starting('inv_1', 'run_1/t0/toolu_é/tool', 1)
    await log.forget('inv_1', 'run_1/t0/toolu_é/tool')
    await expect.poll(() => readdirSync(path), { timeout: 5_000 }).toEqual([])
  })

  it('closes the file of an invocation whose step never finishes here, keeping its count', async () => {
    const path = await folder()
    const step = 'run_1/t0/toolu_1/tool'
    vi.useFakeTimers()
    try {
      const log = createFileCrashLog(path)
      const before = openDescriptors()
      // Attempts aborted while their step ran: no forget ever comes, the retries run elsewhere.
      for (let index = 0; index < 100; index++) await log.starting(`inv_${index}`, step, 0)
      expect(openDescriptors()).toBeGreaterThanOrEqual(before + 100)
      vi.advanceTimersByTime(10 * 60_000)
      expect(openDescriptors()).toBeLessThan(before + 10)
      expect(readdirSync(path)).toHaveLength(100)
      expect(await createFileCrashLog(path).crashes('inv_7', step)).toBe(1)
      // A step that does finish after its file was closed is still forgotten, and its file removed.
      await log.forget('inv_7', step)
      expect(await log.crashes('inv_7', step)).toBe(0)
      expect(await createFileCrashLog(path).crashes('inv_7', step)).toBe(0)
      vi.advanceTimersByTime(2_000)
      expect(readdirSync(path)).toHaveLength(99)
      expect(openDescriptors()).toBeLessThan(before + 10)
    } finally {
      vi.useRealTimers()
    }
  })

  it('keeps at most 256 files open in a burst of invocations, and every count', async () => {
    const path = await folder()
    const step = 'run_1/t0/model'
    const log = createFileCrashLog(path)
    const before = openDescriptors()
    for (let index = 0; index < 400; index++) await log.starting(`inv_${index}`, step, 0)
    expect(openDescriptors() - before).toBeLessThanOrEqual(256)
    expect(await log.crashes('inv_0', step)).toBe(1) // closed first, read again
    expect(await log.crashes('inv_399', step)).toBe(1)
    for (let index = 0; index < 400; index++) await log.forget(`inv_${index}`, step)
    expect(await createFileCrashLog(path).crashes('inv_0', step)).toBe(0)
    expect(await createFileCrashLog(path).crashes('inv_399', step)).toBe(0)
    await expect.poll(() => readdirSync(path), { timeout: 5_000 }).toEqual([])
  })
})

function openDescriptors(): number {
  return readdirSync('/proc/self/fd').length
}

describe('the crash guard of a Restate runtime', () => {
  it('counts a step while it runs and forgets it once its result is in', async () => {
    const log = createFileCrashLog(await folder())
    const runtime = guarded(log)
    const seen = await runtime.step(stepKey('run_1', 'tool', 't0', 'toolu_1'), async () => log.crashes('inv_1', 'run_1/t0/toolu_1/tool'))
    expect(seen).toBe(1)
    await expect.poll(() => log.crashes('inv_1', 'run_1/t0/toolu_1/tool')).toBe(0)
  })

  it('does not run again a step that the most attempts ended in, and names it', async () => {
    const log = createFileCrashLog(await folder())
    for (let crashes = 0; crashes < 3; crashes++) await log.starting('inv_1', 'run_1/t0/toolu_1/tool', crashes)
    let ran = false
    await expect(guarded(log).step(stepKey('run_1', 'tool', 't0', 'toolu_1'), async () => { ran = true })).rejects.toThrow(/^step_crashed: 3 attempts ended while step run_1\/t0\/toolu_1\/tool ran/)
    expect(ran).toBe(false)
    // Its failure is its journaled result: the count goes with it.
    await expect.poll(() => log.crashes('inv_1', 'run_1/t0/toolu_1/tool')).toBe(0)
  })

  it('runs a step an earlier attempt ended in only once no other such step runs in the process', async () => {
    const log = createFileCrashLog(await folder())
    await log.starting('inv_1', 'run_1/t0/toolu_1/tool', 0)
    const holder = await takeSuspectTurn(5_000)
    const order: string[] = []
    const suspect = guarded(log).step(stepKey('run_1', 'tool', 't0', 'toolu_1'), async () => { order.push('suspect') })
    // A step no attempt ended in does not wait.
    await guarded(log).step(stepKey('run_1', 'tool', 't0', 'toolu_2'), async () => { order.push('fresh') })
    await new Promise(resolve => setTimeout(resolve, 50))
    expect(order).toEqual(['fresh'])
    holder()
    await suspect
    expect(order).toEqual(['fresh', 'suspect'])
  })
})

import { readdirSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { stepKey } from 'zidane/durable'
import type { SqliteRuntime } from 'zidane/durable/sqlite'
import { useTempFiles } from './sqlite-test-helpers'

/**
 * Step start markers go to a per-process start log (`<file>-starts-<owner>`), not to a commit: these tests pin the
 * edges of that design (the crash tests with real processes cover SIGKILL at every step boundary).
 */
describe('SQLite start log: markers without a commit', () => {
  const files = useTempFiles()
  const startLogs = (): string[] => readdirSync(files.dir()).filter(name => name.includes('-starts-'))

  /** Starts a step that never finishes, then kills the runtime as a crash would. */
  const dieDuring = async (runtime: SqliteRuntime, name: string): Promise<void> => {
    const pending = runtime.step(stepKey('run_a', 'tool', 't1', name), () => new Promise<string>(() => undefined))
    pending.catch(() => undefined)
    await new Promise(resolve => setTimeout(resolve, 5))
    runtime.abandon()
  }

  it('writes a start marker as one log line, not a commit; the log is gone after a clean close', async () => {
    const runtime = files.open()
    await runtime.runs.claim('s1', 'run_a')
    await runtime.step(stepKey('run_a', 'tool', 't1', 'c1'), async () => 'ok')
    expect(startLogs()).toEqual([`sessions.db-starts-${runtime.owner}`])
    await runtime.runs.release('s1', 'run_a', 'completed')
    runtime.close()
    expect(startLogs()).toEqual([])
  })

  it('passes markers down a chain of crashes: a process that died before reaching the step keeps them', async () => {
    const first = files.open()
    await first.runs.claim('s1', 'run_a')
    await dieDuring(first, 'charge')
    const second = files.open()
    await second.runs.claim('s1', 'run_a')
    // The dead owner's log was read into the file and removed: nothing of its runs is left unfinished.
    expect(startLogs()).toEqual([])
    second.abandon()
    const third = files.open()
    await third.runs.claim('s1', 'run_a')
    expect(await third.step(stepKey('run_a', 'tool', 't1', 'charge'), async attempt => attempt.resumed)).toBe(true)
    expect(await third.step(stepKey('run_a', 'tool', 't1', 'next'), async attempt => attempt.resumed)).toBe(false)
  })

  it('a crash between a recorded step and the next one leaves the next one not resumed', async () => {
    const first = files.open()
    await first.runs.claim('s1', 'run_a')
    await first.step(stepKey('run_a', 'model', 't1'), async () => 'call charge')
    first.abandon()
    const second = files.open()
    await second.runs.claim('s1', 'run_a')
    expect(await second.step(stepKey('run_a', 'model', 't1'), async () => 'again')).toBe('call charge')
    expect(await second.step(stepKey('run_a', 'tool', 't1', 'charge'), async attempt => attempt.resumed)).toBe(false)
  })

  it('voids markers from before a clean suspension, even when the same process claims again and then dies', async () => {
    const first = files.open()
    await first.runs.claim('s1', 'run_a')
    await expect(first.step(stepKey('run_a', 'tool', 't1', 'safe'), async () => { throw new Error('stopped by suspend') })).rejects.toThrow('stopped by suspend')
    await first.runs.markSuspended('s1', 'run_a')
    await first.runs.release('s1', 'run_a', 'suspended')
    await first.runs.claim('s1', 'run_a')
    first.abandon()
    const second = files.open()
    await second.runs.claim('s1', 'run_a')
    expect(await second.step(stepKey('run_a', 'tool', 't1', 'safe'), async attempt => attempt.resumed)).toBe(false)
  })

  it('a runtime that lost its run to a takeover does not start its next step', async () => {
    const first = files.open()
    const second = files.open()
    await first.runs.claim('s1', 'run_a')
    await second.runs.claim('s1', 'run_a', { takeOver: true })
    let ran = false
    await expect(first.step(stepKey('run_a', 'tool', 't1', 'charge'), async () => { ran = true; return 'charged' })).rejects.toThrow('this run continued in another process')
    expect(ran).toBe(false)
  })

  it('a taken-over owner still alive: the claimer sees the step it had in flight as resumed', async () => {
    const first = files.open()
    await first.runs.claim('s1', 'run_a')
    let release: () => void = () => undefined
    const inFlight = first.step(stepKey('run_a', 'tool', 't1', 'slow'), () => new Promise<string>(resolve => { release = () => resolve('late') }))
    await new Promise(resolve => setTimeout(resolve, 5))
    const second = files.open()
    await second.runs.claim('s1', 'run_a', { takeOver: true })
    release()
    await expect(inFlight).rejects.toThrow('this run continued in another process')
    expect(await second.step(stepKey('run_a', 'tool', 't1', 'slow'), async attempt => attempt.resumed)).toBe(true)
  })
})

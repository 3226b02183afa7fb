import { DatabaseSync } from 'node:sqlite'
import { describe, expect, it } from 'vitest'
import { stepKey } from 'zidane/durable'
import { RunTakenOverError } from 'zidane'
import { useTempFiles } from './sqlite-test-helpers'

describe('createSqliteRuntime: the durable contract', () => {
  const files = useTempFiles()

  it('records a step once and replays the recorded value in a later runtime', async () => {
    const first = files.open()
    await first.runs.claim('s1', 'run_a')
    let calls = 0
    const key = stepKey('run_a', 'model', 't1')
    expect(await first.step(key, async () => { calls++; return { answer: 42 } })).toEqual({ answer: 42 })
    expect(await first.step(key, async () => { calls++; return { answer: 0 } })).toEqual({ answer: 42 })
    first.close()
    const second = files.open()
    expect(await second.step(key, async () => { calls++; return { answer: 1 } })).toEqual({ answer: 42 })
    expect(calls).toBe(1)
  })

  it('reports resumed for a step an earlier process started and never recorded, and not for fresh steps', async () => {
    const first = files.open()
    await first.runs.claim('s1', 'run_a')
    const key = stepKey('run_a', 'tool', 't1', 'toolu_1')
    let release: (() => void) | undefined
    const pending = first.step(key, () => new Promise<string>(resolve => { release = () => resolve('late') }))
    while (!release) await new Promise(resolve => setImmediate(resolve)) // the step is running
    first.abandon()
    release()
    await expect(pending).rejects.toMatchObject({ code: 'sqlite_closed' })
    const second = files.open()
    expect(await second.runs.findInterrupted('s1')).toEqual({ sessionId: 's1', runId: 'run_a', waitingOnAwakeable: false })
    await second.runs.claim('s1', 'run_a')
    const attempts: boolean[] = []
    await second.step(key, async attempt => { attempts.push(attempt.resumed); return 'again' })
    await second.step(stepKey('run_a', 'tool', 't1', 'toolu_2'), async attempt => { attempts.push(attempt.resumed); return 'fresh' })
    expect(attempts).toEqual([true, false])
  })

  it('clears start markers of a run that was suspended cleanly', async () => {
    const first = files.open()
    await first.runs.claim('s1', 'run_a')
    const key = stepKey('run_a', 'tool', 't1', 'toolu_1')
    await expect(first.step(key, async () => { throw new Error('stopped by suspend') })).rejects.toThrow('stopped by suspend')
    await first.runs.markSuspended('s1', 'run_a')
    await first.runs.release('s1', 'run_a', 'suspended')
    const second = files.open()
    expect(await second.recoverInterruptedRuns()).toEqual([{ sessionId: 's1', runId: 'run_a', waitingOnAwakeable: false }])
    await second.runs.claim('s1', 'run_a')
    expect(await second.step(key, async attempt => attempt.resumed)).toBe(false)
  })

  it('fences a run: a live owner keeps it, a takeover ends the old owner with the takeover text', async () => {
    const first = files.open()
    const second = files.open()
    await first.runs.claim('s1', 'run_a')
    await expect(second.runs.claim('s1', 'run_a')).rejects.toBeInstanceOf(RunTakenOverError)
    expect(await second.runs.findInterrupted('s1')).toBeNull()
    await second.runs.claim('s1', 'run_a', { takeOver: true })
    await expect(first.step(stepKey('run_a', 'model', 't1'), async () => 'x')).rejects.toThrow('this run continued in another process')
    await expect(first.runs.assertOwner('s1', 'run_a')).rejects.toBeInstanceOf(RunTakenOverError)
    expect(first.isControlError(new RunTakenOverError('run_a'))).toBe(true)
  })

  it('decides that a process on another host is gone from its lease alone', async () => {
    const runtime = files.open({ leaseMs: 1000 })
    const db = new DatabaseSync(files.dbPath())
    db.prepare('INSERT INTO owners (owner_id, pid, host, started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?)').run('other', 1, 'other-host', 0, Date.now())
    db.prepare("INSERT INTO runs (run_id, session_id, owner, status, claimed_at, updated_at) VALUES ('run_a', 's1', 'other', 'running', 0, 0)").run()
    expect(await runtime.runs.findInterrupted('s1')).toBeNull()
    await expect(runtime.runs.claim('s1', 'run_a')).rejects.toBeInstanceOf(RunTakenOverError)
    db.prepare('UPDATE owners SET heartbeat_at = ?').run(Date.now() - 1500)
    db.close()
    expect(await runtime.runs.findInterrupted('s1')).toMatchObject({ runId: 'run_a' })
    await runtime.runs.claim('s1', 'run_a')
  })

  it('keeps an awakeable answer given by another runtime on the file, and the waiter notices it', async () => {
    const waiter = files.open({ awakeablePollMs: 10 })
    const answerer = files.open()
    await waiter.runs.claim('s1', 'run_a')
    const awakeable = waiter.awakeable<string>(stepKey('run_a', 'custom', 't1', 'toolu_1', 'awakeable'))
    const outcome = awakeable.wait()
    await new Promise(resolve => setTimeout(resolve, 30))
    expect((await answerer.recoverInterruptedRuns())).toEqual([])
    await answerer.resolveAwakeable(awakeable.id, 'yes')
    await answerer.resolveAwakeable(awakeable.id, 'second answer is ignored')
    expect(await outcome).toEqual({ timedOut: false, value: 'yes' })
    expect(await waiter.awakeable<string>(stepKey('run_a', 'custom', 't1', 'toolu_1', 'awakeable')).wait()).toEqual({ timedOut: false, value: 'yes' })
  })

  it('reports a run parked on an unanswered awakeable as waiting, and times a wait out', async () => {
    const first = files.open({ awakeablePollMs: 5 })
    await first.runs.claim('s1', 'run_a')
    const awakeable = first.awakeable<string>(stepKey('run_a', 'custom', 't1', 'q', 'awakeable'), { timeoutMs: 30 })
    await first.step(stepKey('run_a', 'interaction', 't1', 'q'), async () => true)
    first.abandon()
    const second = files.open()
    expect(await second.runs.findInterrupted('s1')).toEqual({ sessionId: 's1', runId: 'run_a', waitingOnAwakeable: true })
    await second.runs.claim('s1', 'run_a')
    const again = second.awakeable<string>(stepKey('run_a', 'custom', 't1', 'q', 'awakeable'), { timeoutMs: 30 })
    expect(again.id).toBe(awakeable.id)
    expect(await again.wait()).toEqual({ timedOut: true })
  })

  it('saves steering messages at once and hands each to one run', async () => {
    const runtime = files.open()
    await runtime.steer('s1', 'also update the README')
    await runtime.steer('s1', 'and the changelog')
    expect((await runtime.pendingSteering('s1')).map(message => message.text)).toEqual(['also update the README', 'and the changelog'])
    const other = files.open()
    await other.stores.session.save({ schemaVersion: 1, id: 's1', status: 'idle', turns: [], runs: [{ id: 'run_9', status: 'running', prompt: 'p', startedAt: 1, depth: 0 }], createdAt: 1, updatedAt: 1, metadata: {} })
    expect((await other.takeSteering('s1', 'run_9')).map(message => message.text)).toEqual(['also update the README', 'and the changelog'])
    expect(await runtime.takeSteering('s1', 'run_10')).toEqual([])
  })

  it('hands messages out again when the run that took them never reached the session', async () => {
    const runtime = files.open()
    await runtime.steer('s1', 'hello')
    expect(await runtime.takeSteering('s1', 'run_lost')).toHaveLength(1)
    expect((await runtime.takeSteering('s1', 'run_next')).map(message => message.text)).toEqual(['hello'])
  })
})

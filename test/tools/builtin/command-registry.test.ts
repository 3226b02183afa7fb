import { spawn } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import type { ChildProcess } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { COMMAND_ID_VARIABLE, createCommandRegistry, stopOrphanedCommands } from '../../../src/tools/builtin/command-registry'
import type { CommandRecord } from '../../../src/tools/builtin/command-registry'
import { processFingerprint } from '../../../src/tools/builtin/process-table'
import { runCommand, stopRunningCommands, useCommandRegistry } from '../../../src/tools/builtin/run-command'
import { useSandbox } from './tool-context'

/** An owner that no longer runs: this pid, but a start time it never had. */
const DEAD_OWNER = { pid: process.pid, fingerprint: 'another-boot/1' }

/** Polls /proc until `pid` is gone or a zombie (a SIGKILLed orphan waits for init to reap it). */
async function waitUntilDead(pid: number): Promise<void> {
  while (processFingerprint(pid) !== undefined) await new Promise(resolve => setTimeout(resolve, 10))
}

describe('command registry', () => {
  const sandbox = useSandbox()
  const started: ChildProcess[] = []
  const folder = (): string => path.join(sandbox.root, 'commands')

  /** Starts `script` in its own process group, like `runCommand` does, optionally marked with a command id. */
  function startGroup(script: string, id?: string): ChildProcess & { pid: number } {
    const child = spawn('bash', ['-c', script], { detached: true, stdio: 'ignore', env: id ? { ...process.env, [COMMAND_ID_VARIABLE]: id } : process.env })
    started.push(child)
    if (child.pid === undefined) throw new Error('not started')
    return child as ChildProcess & { pid: number }
  }
  const exited = (child: ChildProcess): Promise<void> => new Promise(resolve => { if (child.exitCode !== null || child.signalCode !== null) resolve(); else child.once('exit', () => resolve()) })
  const record = (entry: CommandRecord): void => {
    createCommandRegistry(folder())
    writeFileSync(path.join(folder(), `${entry.id}.json`), JSON.stringify(entry))
  }

  afterEach(async () => {
    useCommandRegistry(undefined)
    stopRunningCommands()
    for (const child of started.splice(0)) if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) { process.kill(-child.pid, 'SIGKILL'); await exited(child) }
  })

  it('kills the group a dead process recorded, background jobs included, and deletes the record', async () => {
    const pidFile = path.join(sandbox.root, 'job.pid')
    const leader = startGroup(`sleep 60 & echo $! > ${pidFile}; wait`)
    await waitForFile(pidFile)
    const job = Number(readFileSync(pidFile, 'utf8'))
    record({ id: randomUUID(), owner: DEAD_OWNER, group: { pgid: leader.pid, fingerprint: processFingerprint(leader.pid) ?? '' } })
    expect(stopOrphanedCommands(folder())).toBe(1)
    await exited(leader)
    await waitUntilDead(job)
    expect(readdirSync(folder())).toEqual([])
  })

  it('never kills a process whose fingerprint does not match (a recycled pid)', async () => {
    const other = startGroup('sleep 60')
    record({ id: randomUUID(), owner: DEAD_OWNER, group: { pgid: other.pid, fingerprint: 'another-boot/1' } })
    expect(stopOrphanedCommands(folder())).toBe(1)
    expect(processFingerprint(other.pid)).toBeDefined()
    expect(other.exitCode).toBeNull()
    expect(readdirSync(folder())).toEqual([])
  })

  it('leaves the commands of a live process alone', async () => {
    const id = randomUUID()
    const running = startGroup('sleep 60', id)
    const owner = { pid: process.pid, fingerprint: processFingerprint(process.pid) ?? '' }
    record({ id, owner, group: { pgid: running.pid, fingerprint: processFingerprint(running.pid) ?? '' } })
    expect(stopOrphanedCommands(folder())).toBe(0)
    expect(processFingerprint(running.pid)).toBeDefined()
    expect(readdirSync(folder())).toEqual([`${id}.json`])
  })

  it('kills the processes that carry the id of a dead command whose shell is gone', async () => {
    const pidFile = path.join(sandbox.root, 'left.pid')
    const id = randomUUID()
    const shell = startGroup(`sleep 60 >/dev/null 2>&1 & echo $! > ${pidFile}`, id)
    const leaderFingerprint = processFingerprint(shell.pid) ?? ''
    await exited(shell)
    const left = Number(readFileSync(pidFile, 'utf8'))
    expect(processFingerprint(left)).toBeDefined()
    record({ id, owner: DEAD_OWNER, group: { pgid: shell.pid, fingerprint: leaderFingerprint } })
    expect(stopOrphanedCommands(folder())).toBe(1)
    await waitUntilDead(left)
  })

  it('runCommand records a command while it runs and forgets it once its processes are gone', async () => {
    useCommandRegistry(createCommandRegistry(folder()))
    const pidFile = path.join(sandbox.root, 'running.pid')
    const finished = runCommand({ command: `echo $$ > ${pidFile}; exec sleep 60`, cwd: sandbox.root, timeoutMs: 60_000, maxOutputBytes: 1024, signal: new AbortController().signal })
    await waitForFile(pidFile)
    const [name] = readdirSync(folder())
    const entry = JSON.parse(readFileSync(path.join(folder(), name ?? ''), 'utf8')) as CommandRecord
    expect(entry.group?.pgid).toBe(Number(readFileSync(pidFile, 'utf8')))
    stopRunningCommands()
    await finished
    expect(readdirSync(folder())).toEqual([])
  })

  it('runCommand keeps the record of a command that left a background job, until stopRunningCommands', async () => {
    useCommandRegistry(createCommandRegistry(folder()))
    const pidFile = path.join(sandbox.root, 'background.pid')
    const outcome = await runCommand({ command: `sleep 60 >/dev/null 2>&1 & echo $! > ${pidFile}`, cwd: sandbox.root, timeoutMs: 60_000, maxOutputBytes: 1024, signal: new AbortController().signal })
    expect(outcome.exitCode).toBe(0)
    expect(readdirSync(folder())).toHaveLength(1)
    stopRunningCommands()
    await waitUntilDead(Number(readFileSync(pidFile, 'utf8')))
    expect(readdirSync(folder())).toEqual([])
  })
})

/** Waits until `file` exists and is not empty (the command wrote it). */
async function waitForFile(file: string): Promise<void> {
  while (!existsSync(file) || readFileSync(file, 'utf8').trim() === '') await new Promise(resolve => setTimeout(resolve, 10))
}

import { spawn } from 'node:child_process'
import { createOutputBuffer } from './output-buffer'

/** What `runCommand` runs and how long it may take. */
export interface RunCommandOptions {
  command: string
  cwd: string
  timeoutMs: number
  maxOutputBytes: number
  signal: AbortSignal
  /** Time between SIGTERM and SIGKILL of the process group when the command is stopped. */
  killGraceMs?: number
}

/** How a command ended. `exitCode` is null when a signal ended it; `error` is set when it could not start. */
export interface CommandOutcome {
  exitCode: number | null
  exitSignal: string | null
  stdout: string
  stderr: string
  timedOut: boolean
  aborted: boolean
  error?: string
}

const DRAIN_AFTER_EXIT_MS = 1000

/** Process groups of the commands running now, so a host that shuts down can stop them (they run detached). */
const runningGroups = new Set<number>()

/** Stops every command still running (their whole process groups): call it when the host process shuts down. */
export function stopRunningCommands(signal: NodeJS.Signals = 'SIGKILL'): void {
  for (const pid of runningGroups) killGroup(pid, signal)
  runningGroups.clear()
}

/**
 * Runs `command` with `bash -c` in its own process group. On timeout or abort the whole group gets SIGTERM, then
 * SIGKILL after `killGraceMs`. Each of stdout and stderr is capped at `maxOutputBytes` (head and tail kept).
 */
export function runCommand(options: RunCommandOptions): Promise<CommandOutcome> {
  return new Promise(resolve => {
    const child = spawn('bash', ['-c', options.command], { cwd: options.cwd, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    const group = child.pid
    if (group !== undefined) runningGroups.add(group)
    const stdout = createOutputBuffer(options.maxOutputBytes)
    const stderr = createOutputBuffer(options.maxOutputBytes)
    child.stdout.on('data', (chunk: Buffer) => stdout.append(chunk))
    child.stderr.on('data', (chunk: Buffer) => stderr.append(chunk))
    let stopReason: 'timeout' | 'abort' | undefined
    let settled = false
    const stop = (reason: 'timeout' | 'abort'): void => {
      if (stopReason !== undefined || settled) return
      stopReason = reason
      killGroup(group, 'SIGTERM')
      setTimeout(() => killGroup(group, 'SIGKILL'), options.killGraceMs ?? 2000).unref()
    }
    const timer = setTimeout(() => stop('timeout'), options.timeoutMs)
    const onAbort = (): void => stop('abort')
    options.signal.addEventListener('abort', onAbort, { once: true })
    const finish = (exitCode: number | null, exitSignal: string | null, error?: string): void => {
      if (settled) return
      settled = true
      if (group !== undefined) runningGroups.delete(group)
      clearTimeout(timer)
      options.signal.removeEventListener('abort', onAbort)
      const outcome: CommandOutcome = { exitCode, exitSignal, stdout: stdout.text(), stderr: stderr.text(), timedOut: stopReason === 'timeout', aborted: stopReason === 'abort' }
      resolve(error === undefined ? outcome : { ...outcome, error })
    }
    child.on('error', error => finish(null, null, error.message))
    child.on('close', (code, signal) => finish(code, signal))
    // Background jobs may keep the pipes open after bash exits; do not wait for them forever.
    child.on('exit', (code, signal) => setTimeout(() => {
      child.stdout.destroy()
      child.stderr.destroy()
      finish(code, signal)
    }, DRAIN_AFTER_EXIT_MS).unref())
    if (options.signal.aborted) stop('abort')
  })
}

/** Signals every process of the group led by `pid`; a group that is already gone is fine. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, signal)
  } catch {
    // ESRCH: the group has exited already.
  }
}

import { spawn } from 'node:child_process'
import type { ChildProcessByStdio } from 'node:child_process'
import type { Readable, Writable } from 'node:stream'
import { randomUUID } from 'node:crypto'
import { COMMAND_ID_VARIABLE, killCommandProcesses } from './command-registry'
import type { CommandRegistry } from './command-registry'
import type { CommandSandbox, WrapOptions } from './command-sandbox'
import { createOutputBuffer } from './output-buffer'
import { processFingerprint } from './process-table'

/** What `runCommand` runs and how long it may take. */
export interface RunCommandOptions {
  command: string
  cwd: string
  timeoutMs: number
  maxOutputBytes: number
  signal: AbortSignal
  /** Time between SIGTERM and SIGKILL of the process group when the command is stopped. */
  killGraceMs?: number
  /** The command's whole environment (the command id is added). Default: this process's environment. */
  env?: Record<string, string>
  /** Runs the command inside this sandbox, confined to `cwd`. Default: no sandbox. */
  sandbox?: CommandSandbox
  /** The tenant and the extra read-only paths the sandbox gives the command (see `WrapOptions`). */
  wrapOptions?: WrapOptions
  /** Bytes written to the command's standard input, which is then closed. Default: no input (`/dev/null`). */
  input?: string | Buffer
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

/**
 * The commands this process started whose processes may still run, by command id: `exited` once the shell is gone
 * (background jobs it left may still run in its group).
 */
const commands = new Map<string, { group: number | undefined; exited: boolean }>()
let registry: CommandRegistry | undefined

/** Records every command started from now on in `next` (undefined: no longer), so a later process can stop its leftovers. */
export function useCommandRegistry(next: CommandRegistry | undefined): void {
  registry = next
}

/**
 * Stops every command still running, with the background jobs they left: call it when the host process shuts down.
 * A group is signalled while its shell runs; after that, only processes that carry the command's id (a group id may
 * have been reused by then).
 */
export function stopRunningCommands(signal: NodeJS.Signals = 'SIGKILL'): void {
  for (const command of commands.values()) if (!command.exited) killGroup(command.group, signal)
  // The group of an exited shell may have been reused once its pid leads another process.
  killCommandProcesses([...commands].map(([id, { group, exited }]) => ({ id, group: exited && group !== undefined && processFingerprint(group) !== undefined ? undefined : group })), signal)
  for (const id of commands.keys()) registry?.remove(id)
  commands.clear()
}

/**
 * Runs `command` with `bash -c` in its own process group (inside `sandbox` when given: the group is then led by the
 * sandbox, whose processes all die with it). On timeout or abort the whole group gets SIGTERM, then
 * SIGKILL after `killGraceMs`. Each of stdout and stderr is capped at `maxOutputBytes` (head and tail kept).
 */
export function runCommand(options: RunCommandOptions): Promise<CommandOutcome> {
  return new Promise(resolve => {
    const id = randomUUID()
    registry?.add(id)
    const { file, args, release } = options.sandbox ? options.sandbox.wrap(options.command, options.cwd, options.wrapOptions) : { file: 'bash', args: ['-c', options.command], release: undefined }
    const env = { ...(options.env ?? process.env), [COMMAND_ID_VARIABLE]: id }
    const stdin = options.input === undefined ? 'ignore' : 'pipe'
    const child = spawn(file, args, { cwd: options.cwd, detached: true, stdio: [stdin, 'pipe', 'pipe'], env }) as ChildProcessByStdio<Writable | null, Readable, Readable>
    // A command that exits without reading its input closes the pipe: EPIPE is not the command's failure.
    child.stdin?.on('error', () => undefined)
    child.stdin?.end(options.input)
    const group = child.pid
    const command = { group, exited: false }
    commands.set(id, command)
    if (group !== undefined) registry?.started(id, group)
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
      release?.()
      if (group === undefined) command.exited = true
      forgetFinishedCommands()
      clearTimeout(timer)
      options.signal.removeEventListener('abort', onAbort)
      const outcome: CommandOutcome = { exitCode, exitSignal, stdout: stdout.text(), stderr: stderr.text(), timedOut: stopReason === 'timeout', aborted: stopReason === 'abort' }
      resolve(error === undefined ? outcome : { ...outcome, error })
    }
    child.on('error', error => finish(null, null, error.message))
    child.on('close', (code, signal) => finish(code, signal))
    // Background jobs may keep the pipes open after bash exits; do not wait for them forever.
    child.on('exit', (code, signal) => {
      command.exited = true
      setTimeout(() => {
        child.stdout.destroy()
        child.stderr.destroy()
        finish(code, signal)
      }, DRAIN_AFTER_EXIT_MS).unref()
    })
    if (options.signal.aborted) stop('abort')
  })
}

/** What `startCommand` starts: a long-lived command fed and read through its pipes by the caller. */
export interface StartCommandOptions {
  command: string
  cwd: string
  /** The command's whole environment (the command id is added). Default: this process's environment. */
  env?: Record<string, string>
  /** Runs the command inside this sandbox, confined to `cwd`. Default: no sandbox. */
  sandbox?: CommandSandbox
  /** The tenant and the extra read-only paths the sandbox gives the command (see `WrapOptions`). */
  wrapOptions?: WrapOptions
}

/** A long-lived command started by `startCommand`: its pipes, its process group and a way to end it. */
export interface StartedCommand {
  stdin: Writable
  stdout: Readable
  stderr: Readable
  /** The process group led by the command (undefined when it could not start). */
  group: number | undefined
  /** Kills the whole process group at once (SIGKILL); a group that is gone already is fine. */
  kill(): void
  /** Whether the command keeps this process running (default true): an idle long-lived command should not. */
  keepAlive(keep: boolean): void
  /** Called once, when the command has exited or could not start; the sandbox's resources are released by then. */
  onExit(listener: () => void): void
}

/**
 * Starts `command` like `runCommand` (`bash -c` in its own process group, inside `sandbox` when given, recorded for
 * `stopRunningCommands` and the registry) but leaves it running: the caller writes its input, reads its output and
 * bounds it in time itself, and calls `kill` to end it.
 */
export function startCommand(options: StartCommandOptions): StartedCommand {
  const id = randomUUID()
  registry?.add(id)
  const { file, args, release } = options.sandbox ? options.sandbox.wrap(options.command, options.cwd, options.wrapOptions) : { file: 'bash', args: ['-c', options.command], release: undefined }
  const env = { ...(options.env ?? process.env), [COMMAND_ID_VARIABLE]: id }
  const child = spawn(file, args, { cwd: options.cwd, detached: true, stdio: ['pipe', 'pipe', 'pipe'], env })
  child.stdin.on('error', () => undefined)
  const group = child.pid
  const command = { group, exited: false }
  commands.set(id, command)
  if (group !== undefined) registry?.started(id, group)
  const listeners: Array<() => void> = []
  let ended = false
  const end = (): void => {
    if (ended) return
    ended = true
    command.exited = true
    // Whatever the command left in its group goes with it: nothing of a worker outlives it.
    killGroup(group, 'SIGKILL')
    release?.()
    forgetFinishedCommands()
    for (const listener of listeners) listener()
  }
  child.on('error', end)
  child.on('exit', end)
  return {
    stdin: child.stdin,
    stdout: child.stdout,
    stderr: child.stderr,
    group,
    kill: () => killGroup(group, 'SIGKILL'),
    keepAlive: keep => {
      for (const handle of [child, child.stdin, child.stdout, child.stderr] as Array<{ ref?: () => void; unref?: () => void }>) {
        if (keep) handle.ref?.()
        else handle.unref?.()
      }
    },
    onExit: listener => {
      if (ended) listener()
      else listeners.push(listener)
    },
  }
}

/** Forgets the commands whose shell exited and whose process group is empty (no background job left). */
function forgetFinishedCommands(): void {
  for (const [id, command] of commands) {
    if (!command.exited || groupHasProcesses(command.group)) continue
    commands.delete(id)
    registry?.remove(id)
  }
}

/** Whether any process of the group led by `pid` still runs. */
export function groupHasProcesses(pid: number | undefined): boolean {
  if (pid === undefined) return false
  try {
    process.kill(-pid, 0)
    return true
  } catch {
    return false
  }
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

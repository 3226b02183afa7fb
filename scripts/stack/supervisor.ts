import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { withParentDeathSignal } from './parent-death'

/**
 * A process the stack runs. It is restarted with backoff whenever it dies, however often; only a `critical` one that
 * dies, or one that keeps exiting before it is up (it cannot start: a bad setting, a port in use), stops the stack.
 */
export interface SupervisedProcess {
  name: string
  command: string
  args: string[]
  env: NodeJS.ProcessEnv
  critical?: boolean
  /**
   * Whether this start of the process is up (its port accepts connections), polled every 50 ms after each start until
   * it is or the process exits: often enough to see a process up before a request can crash it. Without it, a start
   * counts as up once it has run for 5 s.
   */
  ready?: () => Promise<boolean>
  /** How long `stop()` waits after SIGTERM before SIGKILL. Default 5000 ms. */
  stopTimeoutMs?: number
  /** Longest wait before an automatic restart (the backoff doubles from 100 ms up to it). Default 10000 ms. */
  maxBackoffMs?: number
  /** Where output lines go, and the supervisor's own lines (as `stack`). Default: stdout, prefixed with the name. */
  log?: (name: string, line: string) => void
}

/** A running supervised process. */
export interface ProcessHandle {
  readonly name: string
  current(): ChildProcess | undefined
  /** Stops the process and does not restart it. */
  stop(): Promise<void>
  /**
   * Starts a stopped process again (supervised as before); `env` is laid over its environment for this start and
   * every later one (an operator's changed setting).
   */
  restart(env?: NodeJS.ProcessEnv): void
  /**
   * After a planned kill: starts the process now if it waits for its automatic restart (it is left alone when it
   * already runs again), and forgets the exit, so the next automatic restart waits 100 ms again.
   */
  resume(): void
}

const FIRST_BACKOFF_MS = 100
const DEFAULT_MAX_BACKOFF_MS = 10_000
/** Without a readiness check, a start that lived this long counts as up. */
const UP_AFTER_MS = 5_000
/** A process that exits this many times in a row with an exit code before it is up cannot start: the stack stops. */
const MAX_FAILED_STARTS = 5
/** A process that ran this long was healthy: its next restart waits the first backoff again. */
const HEALTHY_RUN_MS = 30_000
const READY_POLL_MS = 50

/** Why a process exited, and how often it has lately: what the restart line and a fatal reason say. */
interface ExitRecord { how: string; livedMs: number; up: boolean }

/**
 * Starts `spec`, prefixes its output with its name, and restarts it (100 ms, doubling up to `maxBackoffMs`) when it
 * exits, logging the exit code or signal and how many exits in a row came soon after their start. It never gives up
 * on a process that was up, however often it crashes (a run whose step crashes it on every attempt is ended by
 * Restate's bounded retries, not by stopping the stack); `onFatal` is called only when a `critical` process exits or
 * when one exits five times in a row, with an exit code, before it was up.
 */
export function supervise(spec: SupervisedProcess, onFatal: (reason: string) => void): ProcessHandle {
  let child: ChildProcess | undefined
  let stopping = false
  let backoffMs = FIRST_BACKOFF_MS
  let failedStarts = 0
  let exitsInARow = 0
  // The pending automatic restart, cancelled by stop() and restart(): two live copies of one process must never exist.
  let restartTimer: NodeJS.Timeout | undefined
  const say = (line: string): void => { if (spec.log) spec.log('stack', line); else console.error(`[stack] ${line}`) }
  const onExit = (exit: ExitRecord, code: number | null): void => {
    const reason = `${spec.name} exited (${exit.how})`
    if (spec.critical) return onFatal(reason)
    failedStarts = !exit.up && code !== null ? failedStarts + 1 : 0
    if (failedStarts >= MAX_FAILED_STARTS) return onFatal(`${reason} ${failedStarts} times in a row before it was up; its output above says why`)
    if (exit.livedMs >= HEALTHY_RUN_MS) backoffMs = FIRST_BACKOFF_MS
    exitsInARow = exit.livedMs < HEALTHY_RUN_MS ? exitsInARow + 1 : 1
    say(`${reason} ${formatSeconds(exit.livedMs)} after it started${exit.up ? '' : ', before it was up'}${exitsInARow > 1 ? `; ${exitsInARow} exits in a row within ${HEALTHY_RUN_MS / 1000} s of their start` : ''}; restarting in ${backoffMs} ms`)
    restartTimer = setTimeout(() => {
      restartTimer = undefined
      if (!stopping) start()
    }, backoffMs)
    backoffMs = Math.min(backoffMs * 2, spec.maxBackoffMs ?? DEFAULT_MAX_BACKOFF_MS)
  }
  const start = (): void => {
    const startedAt = Date.now()
    let up = false
    // Own process group: a terminal's Ctrl-C reaches only the stack, which then stops each process once, in order.
    // The parent-death signal: a supervisor killed with SIGKILL takes its processes with it.
    const program = withParentDeathSignal(spec.command, spec.args)
    const started = spawn(program.command, program.args, { env: spec.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    child = started
    const log = spec.log ?? printLine
    const lines = (chunk: Buffer): void => { for (const line of chunk.toString().split('\n')) if (line.trim()) log(spec.name, line) }
    started.stdout?.on('data', lines)
    started.stderr?.on('data', lines)
    if (spec.ready) void watchReady(started, spec.ready, () => { up = true })
    started.on('exit', (code, signal) => {
      if (stopping) return
      const livedMs = Date.now() - startedAt
      onExit({ how: signal ?? `code ${String(code)}`, livedMs, up: up || (!spec.ready && livedMs >= UP_AFTER_MS) }, code)
    })
  }
  start()
  return {
    name: spec.name,
    current: () => child,
    restart: (env) => {
      clearTimeout(restartTimer)
      if (env) spec.env = { ...spec.env, ...env }
      stopping = false
      backoffMs = FIRST_BACKOFF_MS
      start()
    },
    resume: () => {
      backoffMs = FIRST_BACKOFF_MS
      failedStarts = 0
      exitsInARow = 0
      if (restartTimer === undefined || stopping) return
      clearTimeout(restartTimer)
      restartTimer = undefined
      start()
    },
    stop: async () => {
      stopping = true
      clearTimeout(restartTimer)
      if (child) await stopProcess(child, spec.stopTimeoutMs)
    },
  }
}

/** Polls `ready` while `started` runs, until it says so; then calls `onUp`. */
async function watchReady(started: ChildProcess, ready: () => Promise<boolean>, onUp: () => void): Promise<void> {
  const running = (): boolean => started.exitCode === null && started.signalCode === null
  while (running()) {
    if (await ready().catch(() => false)) {
      if (running()) onUp()
      return
    }
    await new Promise(resolve => setTimeout(resolve, READY_POLL_MS))
  }
}

function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`
}

/** SIGTERM, then SIGKILL after `timeoutMs` (default 5 s); resolves once the process exited. */
export async function stopProcess(child: ChildProcess, timeoutMs = 5_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()))
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
  await exited
  clearTimeout(timer)
}

function printLine(name: string, line: string): void {
  process.stdout.write(`[${name}] ${line}\n`)
}

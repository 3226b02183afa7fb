import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'

/** A process the stack runs, restarted with backoff when it dies unless it is `critical` (then the stack stops). */
export interface SupervisedProcess {
  name: string
  command: string
  args: string[]
  env: NodeJS.ProcessEnv
  critical?: boolean
  /** How long `stop()` waits after SIGTERM before SIGKILL. Default 5000 ms. */
  stopTimeoutMs?: number
  /** Where output lines go. Default: stdout, prefixed with the name. */
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

const MAX_BACKOFF_MS = 10_000
/** A process that exits this soon after its start is failing at start (bad configuration, port in use)… */
const QUICK_EXIT_MS = 5_000
/** …and after this many such exits in a row the stack gives up instead of restarting it forever. */
const MAX_QUICK_EXITS = 5

/** Starts `spec`, prefixes its output with its name, and restarts it (100 ms, doubling to 10 s) when it exits. */
export function supervise(spec: SupervisedProcess, onFatal: (reason: string) => void): ProcessHandle {
  let child: ChildProcess | undefined
  let stopping = false
  let backoffMs = 100
  let quickExits = 0
  // The pending automatic restart, cancelled by stop() and restart(): two live copies of one process must never exist.
  let restartTimer: NodeJS.Timeout | undefined
  const start = (): void => {
    const startedAt = Date.now()
    // Own process group: a terminal's Ctrl-C reaches only the stack, which then stops each process once, in order.
    child = spawn(spec.command, spec.args, { env: spec.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    const log = spec.log ?? printLine
    const lines = (chunk: Buffer): void => { for (const line of chunk.toString().split('\n')) if (line.trim()) log(spec.name, line) }
    child.stdout?.on('data', lines)
    child.stderr?.on('data', lines)
    child.on('exit', (code, signal) => {
      if (stopping) return
      const reason = `${spec.name} exited (${signal ?? `code ${String(code)}`})`
      if (spec.critical) return onFatal(reason)
      quickExits = Date.now() - startedAt < QUICK_EXIT_MS && signal === null ? quickExits + 1 : 0
      if (quickExits >= MAX_QUICK_EXITS) return onFatal(`${reason} ${quickExits} times in a row right after starting; its output above says why`)
      if (Date.now() - startedAt > 30_000) backoffMs = 100
      console.error(`[stack] ${reason}; restarting in ${backoffMs} ms`)
      restartTimer = setTimeout(() => {
        restartTimer = undefined
        if (!stopping) start()
      }, backoffMs)
      backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS)
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
      backoffMs = 100
      start()
    },
    resume: () => {
      backoffMs = 100
      quickExits = 0
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

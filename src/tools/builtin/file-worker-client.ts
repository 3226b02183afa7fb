import { readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { stripTypeScriptTypes } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ToolError } from '../tool'
import type { CommandSandbox } from './command-sandbox'
import type { FileReply, FileRequest } from './file-worker/protocol'
import { createPrivateTempFolder } from './private-temp-folder'
import { startCommand } from './run-command'
import type { StartCommandOptions, StartedCommand } from './run-command'
import { toolEnvironment } from './tool-environment'

/** How file-tool calls run: in which sandbox, for which tenant, and their bounds. */
export interface FileWorkerOptions {
  /** Runs every call's worker inside this sandbox, confined to the workspace. Default: a plain child process. */
  sandbox?: CommandSandbox
  /** The tenant the workspace belongs to (the sandbox's per-tenant limits). */
  tenant?: string
  /** Time a call may take before its worker is killed. Default {@link FILE_TOOL_TIMEOUT_MS}. */
  timeoutMs?: number
  /** Address space of a call's worker, in MiB. Default {@link FILE_TOOL_MEMORY_MB}. */
  memoryMb?: number
  /** Disk the workspace may use: writes past it are refused. Default: the sandbox's `workspaceQuotaBytes`, else none. */
  quotaBytes?: number
  /** Time an idle worker waits for the next call before it exits. Default {@link FILE_WORKER_IDLE_MS}. */
  idleMs?: number
  /** Observes every worker process started, with the process group it leads (tests count and find them this way). */
  onWorkerStart?: (group: number | undefined) => void
}

/** One file operation of the worker, without the root (the workspace adds it). */
export type FileOperation = FileRequest extends infer Request ? Request extends FileRequest ? Omit<Request, 'root'> : never : never

/** Runs one file operation in a worker process of the workspace and returns its text; failures throw `ToolError` with the worker's code. */
export type FileWorker = (operation: FileOperation, signal: AbortSignal) => Promise<string>

/** Default time limit of one file-tool call. */
export const FILE_TOOL_TIMEOUT_MS = 20_000
/**
 * Default address-space bound of one file-tool call's process, in MiB. Node reserves far more address space than it
 * uses: under 1 GiB a worker answering 256 KiB died with `std::bad_alloc`. Its heap is capped at 384 MiB apart from this.
 */
export const FILE_TOOL_MEMORY_MB = 2048

/** Default time an idle worker waits for the next call of its workspace before it exits. */
export const FILE_WORKER_IDLE_MS = 5000

const HEAP_MB = 384
/** Idle workers kept per workspace: a call while they are all busy starts another, which exits after its call. */
const MAX_IDLE_WORKERS = 1
const DRAIN_AFTER_EXIT_MS = 1000
const MAX_REPLY_BYTES = 8 * 1024 * 1024
const WORKER_SOURCE = fileURLToPath(new URL('./file-worker/', import.meta.url))
const FROM_SOURCE = import.meta.url.endsWith('.ts')
let workerMain: string | undefined

/**
 * The worker's entry as plain JavaScript. A build has it next to this file; from the TypeScript sources (development,
 * tests) the worker's files are stripped of their types once per process into a private temporary folder: Node's own
 * type stripping needs WebAssembly, which reserves more address space than a worker's memory bound allows.
 */
function workerEntry(): string {
  if (workerMain !== undefined) return workerMain
  if (!FROM_SOURCE) return (workerMain = path.join(WORKER_SOURCE, 'main.js'))
  const folder = createPrivateTempFolder('zidane-file-worker-')
  // Development only: Node's "stripTypeScriptTypes is an experimental feature" warning would land in every log.
  const emitWarning = process.emitWarning.bind(process)
  process.emitWarning = () => undefined
  try {
    for (const name of readdirSync(WORKER_SOURCE).filter(file => file.endsWith('.ts'))) {
      const code = stripTypeScriptTypes(readFileSync(path.join(WORKER_SOURCE, name), 'utf8'), { mode: 'strip' })
      writeFileSync(path.join(folder, name.replace(/\.ts$/, '.mjs')), code.replace(/(from\s+['"]\.\/[^'"]+)\.ts(['"])/g, '$1.mjs$2'))
    }
  } finally {
    process.emitWarning = emitWarning
  }
  return (workerMain = path.join(folder, 'main.mjs'))
}

/**
 * A {@link FileWorker} for the workspace at `root` (its real path). Calls run in warm worker processes (`node` on the
 * worker's entry, inside `options.sandbox` when given) bound to this workspace and tenant, one call at a time each:
 * an idle worker serves the next call and exits after `idleMs` without one. A call that times out, is aborted, gets
 * no parsable reply or finds its worker dead kills that worker (its whole process group); the next call starts a new
 * one. The services' process itself never opens a workspace path.
 */
export function createFileWorker(root: string, options: FileWorkerOptions = {}): FileWorker {
  const node = realpathSync(process.execPath)
  const timeoutMs = options.timeoutMs ?? FILE_TOOL_TIMEOUT_MS
  const quotaBytes = options.quotaBytes ?? options.sandbox?.workspaceQuotaBytes
  const idleMs = options.idleMs ?? FILE_WORKER_IDLE_MS
  const entry = workerEntry()
  const command = workerCommand(node, entry, options.memoryMb ?? FILE_TOOL_MEMORY_MB)
  const wrapOptions = { readOnlyPaths: [node, path.dirname(entry)], ...(options.tenant === undefined ? {} : { tenant: options.tenant }) }
  const start: StartCommandOptions = { command, cwd: root, env: toolEnvironment(root), ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox, wrapOptions }) }
  const idle: WarmWorker[] = []
  const startWorker = (): WarmWorker => {
    const worker = warmWorker(startCommand(start))
    options.onWorkerStart?.(worker.process.group)
    worker.process.onExit(() => {
      const at = idle.indexOf(worker)
      if (at >= 0) idle.splice(at, 1)
    })
    return worker
  }
  const keep = (worker: WarmWorker): void => {
    if (worker.dead || idle.length >= MAX_IDLE_WORKERS) return worker.process.kill()
    idle.push(worker)
    worker.process.keepAlive(false)
    worker.idleTimer = setTimeout(() => worker.process.kill(), idleMs)
    worker.idleTimer.unref()
  }
  return async (operation, signal) => {
    if (signal.aborted) throw abortedError()
    const worker = takeLive(idle) ?? startWorker()
    clearTimeout(worker.idleTimer)
    worker.process.keepAlive(true)
    const request = JSON.stringify({ ...operation, root, ...(quotaBytes === undefined ? {} : { quotaBytes }) })
    const outcome = await exchange(worker, request, timeoutMs, signal)
    if (outcome.kind !== 'reply' || outcome.reply.retire === true) worker.process.kill()
    else keep(worker)
    if (outcome.kind === 'timeout') throw new ToolError(`The call did not finish within ${timeoutMs / 1000} s and was stopped (a FIFO, a very large tree or a pattern that backtracks without end can cause this).`, 'tool_timeout')
    if (outcome.kind === 'abort') throw abortedError()
    if (outcome.kind !== 'reply') throw new ToolError('The file operation stopped without a result: it ran out of memory or crashed.', 'tool_crashed')
    if (!outcome.reply.ok) throw new ToolError(outcome.reply.message, outcome.reply.code)
    return outcome.reply.content
  }
}

/** The last idle worker still alive, taken out of `idle` (the dead ones found on the way are dropped). */
function takeLive(idle: WarmWorker[]): WarmWorker | undefined {
  for (let worker = idle.pop(); worker !== undefined; worker = idle.pop()) if (!worker.dead) return worker
  return undefined
}

/** A worker process and what its client knows of it: the reply bytes read so far, whether it has exited. */
interface WarmWorker {
  process: StartedCommand
  dead: boolean
  /** Bytes of standard output not yet part of a whole reply line. */
  pending: Buffer[]
  pendingBytes: number
  /** Called on new output or on exit, while a call waits. */
  wake: (() => void) | undefined
  idleTimer: NodeJS.Timeout | undefined
}

type Exchange = { kind: 'reply'; reply: FileReply } | { kind: 'timeout' | 'abort' | 'crash' }

function warmWorker(process: StartedCommand): WarmWorker {
  const worker: WarmWorker = { process, dead: false, pending: [], pendingBytes: 0, wake: undefined, idleTimer: undefined }
  process.stdout.on('data', (chunk: Buffer) => {
    worker.pending.push(chunk)
    worker.pendingBytes += chunk.length
    worker.wake?.()
  })
  // What the worker prints on standard error (a crash's trace) is not the call's result: it is read and dropped.
  process.stderr.resume()
  const die = (): void => {
    if (worker.dead) return
    worker.dead = true
    clearTimeout(worker.idleTimer)
    worker.wake?.()
  }
  // Dead once its output has ended, so a reply written just before the exit is still read; the group is killed on
  // exit, so the pipe closes at once, else it is dropped after a grace time.
  process.stdout.on('close', die)
  process.onExit(() => setTimeout(() => {
    process.stdout.destroy()
    die()
  }, DRAIN_AFTER_EXIT_MS).unref())
  return worker
}

/** Sends one request line to `worker` and waits for its reply line, its death, the time limit or the abort. */
function exchange(worker: WarmWorker, request: string, timeoutMs: number, signal: AbortSignal): Promise<Exchange> {
  return new Promise(resolve => {
    const finish = (outcome: Exchange): void => {
      worker.wake = undefined
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      resolve(outcome)
    }
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs)
    const onAbort = (): void => finish({ kind: 'abort' })
    signal.addEventListener('abort', onAbort, { once: true })
    worker.wake = () => {
      const line = takeLine(worker)
      if (line !== undefined) return finish(replyOutcome(line))
      if (worker.dead || worker.pendingBytes > MAX_REPLY_BYTES) finish({ kind: 'crash' })
    }
    worker.process.stdin.write(`${request}\n`)
    worker.wake()
  })
}

/** The first whole line of `worker`'s output, taken out of its buffer; undefined while none has ended. */
function takeLine(worker: WarmWorker): string | undefined {
  const last = worker.pending.at(-1)
  if (last === undefined || !last.includes(10)) return undefined
  const output = Buffer.concat(worker.pending)
  const end = output.indexOf(10)
  const rest = output.subarray(end + 1)
  worker.pending = rest.length > 0 ? [rest] : []
  worker.pendingBytes = rest.length
  return output.subarray(0, end).toString('utf8')
}

function replyOutcome(line: string): Exchange {
  if (Buffer.byteLength(line) > MAX_REPLY_BYTES) return { kind: 'crash' }
  const reply = parseReply(line)
  return reply === undefined ? { kind: 'crash' } : { kind: 'reply', reply }
}

function abortedError(): ToolError {
  return new ToolError('The call was aborted.', 'aborted')
}

function workerCommand(node: string, entry: string, memoryMb: number): string {
  const flags = [`--max-old-space-size=${Math.min(HEAP_MB, Math.floor(memoryMb / 2))}`, '--enable-experimental-regexp-engine-on-excessive-backtracks']
  return `ulimit -v ${memoryMb * 1024} 2>/dev/null; exec ${quote(node)} ${flags.join(' ')} ${quote(entry)}`
}

function parseReply(stdout: string): FileReply | undefined {
  try {
    const reply = JSON.parse(stdout) as FileReply
    return typeof reply === 'object' && reply !== null && typeof reply.ok === 'boolean' ? reply : undefined
  } catch {
    return undefined
  }
}

function quote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`
}

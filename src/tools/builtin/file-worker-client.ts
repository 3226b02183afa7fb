import { readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { stripTypeScriptTypes } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ToolError } from '../tool'
import type { CommandSandbox } from './command-sandbox'
import type { FileRequest } from './file-worker/protocol'
import { bundleWorkerModules } from './file-worker-bundle'
import { createFileWorkerPool, FILE_WORKER_IDLE_MS } from './file-worker-pool'
import type { FileWorkerPool } from './file-worker-pool'
import { exchange } from './file-worker-process'
import { createPrivateTempFolder } from './private-temp-folder'
import type { StartCommandOptions } from './run-command'
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
  /** Time an idle worker waits for the next call before it exits, when no `pool` is given. Default {@link FILE_WORKER_IDLE_MS}. */
  idleMs?: number
  /**
   * Warm workers shared with other workspaces' clients (the services' composition owns one); a worker serves only
   * clients with the same start options (sandbox, tenant, `confineTo`, bounds). Default: a pool of this workspace's own.
   */
  pool?: FileWorkerPool
  /**
   * The folder the worker process is confined to (bound read-write in the sandbox, its working folder): `root` or a
   * folder above it that holds only workspaces of the same tenant, so one warm worker serves all of them (the services
   * bind the tenant's folder). Paths are still resolved inside `root` and opened one folder at a time through
   * descriptors without following links, so a folder another process swaps for a link meanwhile (a session's own
   * shell) fails the call instead of leading out of `root` (on Linux; elsewhere opens go by name). The worker may make
   * no link nor rename anything (`WrapOptions.denyLinks`); a sandbox that cannot enforce that (seccomp off) confines
   * it to `root` whatever this says. Default: `root`.
   */
  confineTo?: string
  /**
   * Observes every worker process started, with the process group it leads (tests count and find them this way), when
   * no `pool` is given; a shared pool reports its starts to its own `onWorkerStart`.
   */
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

const HEAP_MB = 384
/** Idle workers kept per workspace without a shared pool: a call while they are all busy starts another, which exits after its call. */
const MAX_IDLE_WORKERS = 1
const WORKER_SOURCE = fileURLToPath(new URL('./file-worker/', import.meta.url))
const FROM_SOURCE = import.meta.url.endsWith('.ts')
let workerMain: string | undefined

/**
 * The worker's entry: its modules as one plain JavaScript file ({@link bundleWorkerModules}), written once per process
 * into a private temporary folder. From the TypeScript sources (development, tests) the modules are stripped of their
 * types first: Node's own type stripping needs WebAssembly, which reserves more address space than a worker's memory
 * bound allows. A build has them as `.js` next to this file.
 */
function workerEntry(): string {
  if (workerMain !== undefined) return workerMain
  const folder = createPrivateTempFolder('zidane-file-worker-')
  const file = path.join(folder, 'main.mjs')
  writeFileSync(file, bundleWorkerModules(workerModules()))
  return (workerMain = file)
}

/** The worker's modules by name (`read-file`), as JavaScript. */
function workerModules(): Map<string, string> {
  const extension = FROM_SOURCE ? '.ts' : '.js'
  const names = readdirSync(WORKER_SOURCE).filter(file => file.endsWith(extension) && !file.endsWith('.d.ts'))
  // Development only: Node's "stripTypeScriptTypes is an experimental feature" warning would land in every log.
  const emitWarning = process.emitWarning.bind(process)
  process.emitWarning = () => undefined
  try {
    return new Map(names.map(name => {
      const code = readFileSync(path.join(WORKER_SOURCE, name), 'utf8')
      return [name.slice(0, -extension.length), FROM_SOURCE ? stripTypeScriptTypes(code, { mode: 'strip' }) : code]
    }))
  } finally {
    process.emitWarning = emitWarning
  }
}

/**
 * A {@link FileWorker} for the workspace at `root` (its real path). Calls run in warm worker processes (`node` on the
 * worker's entry, inside `options.sandbox` when given, confined to `options.confineTo`, default `root`) of this
 * tenant, one call at a time each, taken from `options.pool` (else a pool of this workspace's own that keeps one idle
 * worker for `idleMs`). A call that times out, is aborted, gets no parsable reply or finds its worker dead kills that
 * worker (its whole process group); the next call gets another. The services' process itself never opens a workspace
 * path, and the worker resolves every path inside `root`, whatever folder it is confined to.
 */
export function createFileWorker(root: string, options: FileWorkerOptions = {}): FileWorker {
  const timeoutMs = options.timeoutMs ?? FILE_TOOL_TIMEOUT_MS
  const quotaBytes = options.quotaBytes ?? options.sandbox?.workspaceQuotaBytes
  const start = fileWorkerStart(root, options)
  const pool = options.pool ?? createFileWorkerPool({ idleMs: options.idleMs ?? FILE_WORKER_IDLE_MS, maxIdlePerScope: MAX_IDLE_WORKERS, ...(options.onWorkerStart ? { onWorkerStart: options.onWorkerStart } : {}) })
  return async (operation, signal) => {
    if (signal.aborted) throw abortedError()
    const worker = await pool.acquire(start, signal, root) // served fairly among the sessions sharing the worker
    const request = JSON.stringify({ ...operation, root, ...(quotaBytes === undefined ? {} : { quotaBytes }) })
    const outcome = await exchange(worker, request, timeoutMs, signal)
    pool.release(worker, outcome.kind === 'reply' && outcome.reply.retire !== true)
    if (outcome.kind === 'timeout') throw new ToolError(`The call did not finish within ${timeoutMs / 1000} s and was stopped (a FIFO, a very large tree or a pattern that backtracks without end can cause this).`, 'tool_timeout')
    if (outcome.kind === 'abort') throw abortedError()
    if (outcome.kind !== 'reply') throw new ToolError('The file operation stopped without a result: it ran out of memory or crashed.', 'tool_crashed')
    if (!outcome.reply.ok) throw new ToolError(outcome.reply.message, outcome.reply.code)
    return outcome.reply.content
  }
}

/**
 * How the workers of workspace `root` start (what a pool keys them by): the Node binary on the worker's entry, in the
 * folder they are confined to (`options.confineTo`, default `root`); throws `ToolError` `invalid_workspace` when
 * `root` is outside that folder.
 */
export function fileWorkerStart(root: string, options: FileWorkerOptions): StartCommandOptions {
  // Bound above its workspace only where the sandbox keeps it from planting links there (see `WrapOptions.denyLinks`).
  const confineTo = options.sandbox !== undefined && options.sandbox.deniesLinks !== true ? root : options.confineTo ?? root
  const inside = path.relative(confineTo, root)
  if (inside === '..' || inside.startsWith(`..${path.sep}`) || path.isAbsolute(inside)) throw new ToolError('The workspace is outside the folder its file worker is confined to.', 'invalid_workspace')
  const node = realpathSync(process.execPath)
  const entry = workerEntry()
  const command = workerCommand(node, entry, options.memoryMb ?? FILE_TOOL_MEMORY_MB)
  const wrapOptions = { readOnlyPaths: [node, path.dirname(entry)], denyLinks: true, ...(options.tenant === undefined ? {} : { tenant: options.tenant }) }
  // The tenant is part of the start options even without a sandbox, so no pool hands this worker to another tenant.
  return { command, cwd: confineTo, env: toolEnvironment(confineTo), wrapOptions, ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }) }
}

function abortedError(): ToolError {
  return new ToolError('The call was aborted.', 'aborted')
}

function workerCommand(node: string, entry: string, memoryMb: number): string {
  const flags = [`--max-old-space-size=${Math.min(HEAP_MB, Math.floor(memoryMb / 2))}`, '--enable-experimental-regexp-engine-on-excessive-backtracks']
  return `ulimit -v ${memoryMb * 1024} 2>/dev/null; exec ${quote(node)} ${flags.join(' ')} ${quote(entry)}`
}

function quote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`
}

import { readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { stripTypeScriptTypes } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { ToolError } from '../tool'
import type { CommandSandbox } from './command-sandbox'
import type { FileReply, FileRequest } from './file-worker/protocol'
import { createPrivateTempFolder } from './private-temp-folder'
import { runCommand } from './run-command'
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
}

/** One file operation of the worker, without the root (the workspace adds it). */
export type FileOperation = FileRequest extends infer Request ? Request extends FileRequest ? Omit<Request, 'root'> : never : never

/** Runs one file operation in a fresh worker process and returns its text; failures throw `ToolError` with the worker's code. */
export type FileWorker = (operation: FileOperation, signal: AbortSignal) => Promise<string>

/** Default time limit of one file-tool call. */
export const FILE_TOOL_TIMEOUT_MS = 20_000
/**
 * Default address-space bound of one file-tool call's process, in MiB. Node reserves far more address space than it
 * uses: under 1 GiB a worker answering 256 KiB died with `std::bad_alloc`. Its heap is capped at 384 MiB apart from this.
 */
export const FILE_TOOL_MEMORY_MB = 2048

const HEAP_MB = 384
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
 * A {@link FileWorker} for the workspace at `root` (its real path): each call starts `node` on the worker's entry with
 * the request on standard input, inside `options.sandbox` when given, killed past its time limit. The services'
 * process itself never opens a workspace path.
 */
export function createFileWorker(root: string, options: FileWorkerOptions = {}): FileWorker {
  const node = realpathSync(process.execPath)
  const timeoutMs = options.timeoutMs ?? FILE_TOOL_TIMEOUT_MS
  const quotaBytes = options.quotaBytes ?? options.sandbox?.workspaceQuotaBytes
  const entry = workerEntry()
  const command = workerCommand(node, entry, options.memoryMb ?? FILE_TOOL_MEMORY_MB)
  const wrapOptions = { readOnlyPaths: [node, path.dirname(entry)], ...(options.tenant === undefined ? {} : { tenant: options.tenant }) }
  return async (operation, signal) => {
    const input = JSON.stringify({ ...operation, root, ...(quotaBytes === undefined ? {} : { quotaBytes }) })
    const run = { command, cwd: root, timeoutMs, maxOutputBytes: MAX_REPLY_BYTES, signal, input, env: toolEnvironment(root), killGraceMs: 0 }
    const outcome = await runCommand(options.sandbox === undefined ? run : { ...run, sandbox: options.sandbox, wrapOptions })
    if (outcome.timedOut) throw new ToolError(`The call did not finish within ${timeoutMs / 1000} s and was stopped (a FIFO, a very large tree or a pattern that backtracks without end can cause this).`, 'tool_timeout')
    if (outcome.aborted) throw new ToolError('The call was aborted.', 'aborted')
    const reply = parseReply(outcome.stdout)
    if (reply === undefined) throw new ToolError('The file operation stopped without a result: it ran out of memory or crashed.', 'tool_crashed')
    if (!reply.ok) throw new ToolError(reply.message, reply.code)
    return reply.content
  }
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

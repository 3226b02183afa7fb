import { mkdirSync } from 'node:fs'
import { createMemoryToolStateStore } from '../../durable/memory-tool-state-store'
import type { ToolDef } from '../tool'
import { editFileTool } from './edit-file-tool'
import type { FileWorkerOptions } from './file-worker-client'
import { globTool } from './glob-tool'
import { grepTool } from './grep-tool'
import { listFilesTool } from './list-files-tool'
import { readFileTool } from './read-file-tool'
import type { ShellToolOptions } from './shell-tool'
import { shellTool } from './shell-tool'
import { todoReadTool } from './todo-read-tool'
import { todoWriteTool } from './todo-write-tool'
import { createWorkspace } from './workspace'
import type { Workspace } from './workspace'
import { writeFileTool } from './write-file-tool'

/**
 * The workspace the built-in tools of `options` work in (its root created when missing): its file worker runs in the
 * shell's sandbox unless `options.files` names another, for `options.tenant`.
 */
export function builtinWorkspace(options: BuiltinToolsOptions): Workspace {
  mkdirSync(options.root, { recursive: true, mode: 0o700 })
  const sandbox = options.files?.sandbox ?? options.shell?.sandbox
  return createWorkspace(options.root, { ...options.files, ...(sandbox ? { sandbox } : {}), ...(options.tenant === undefined ? {} : { tenant: options.tenant }) })
}

/** Options of `createBuiltinTools`: the workspace root the tools are confined to, and the shell's limits. */
export interface BuiltinToolsOptions {
  root: string
  shell?: ShellToolOptions
  /** The tenant the workspace belongs to: its tools' processes share the tenant's limits in the sandbox. */
  tenant?: string
  /** Where the file tools' worker runs. Default: the shell's sandbox (`shell.sandbox`), else a plain child process. */
  files?: Omit<FileWorkerOptions, 'tenant'>
}

/**
 * Creates the nine built-in tools confined to `root` (the file tools do their work in a worker process per call,
 * inside the shell's sandbox when it has one): read_file, list_files, glob, grep, todoread (replay-safe) and
 * write_file, edit_file, shell, todowrite. The root is created when missing. The todo tools share one in-memory list when
 * a run has no tool-state store.
 */
export function createBuiltinTools(options: BuiltinToolsOptions, workspace: Workspace = builtinWorkspace(options)): ToolDef[] {
  const todoFallback = createMemoryToolStateStore()
  return [
    readFileTool(workspace),
    listFilesTool(workspace),
    globTool(workspace),
    grepTool(workspace),
    todoReadTool(todoFallback),
    writeFileTool(workspace),
    editFileTool(workspace),
    shellTool(workspace, options.tenant === undefined ? (options.shell ?? {}) : { ...options.shell, tenant: options.tenant }),
    todoWriteTool(todoFallback),
  ]
}

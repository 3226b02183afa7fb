import { mkdirSync } from 'node:fs'
import { createMemoryToolStateStore } from '../../durable/memory-tool-state-store'
import type { ToolDef } from '../tool'
import { editFileTool } from './edit-file-tool'
import { globTool } from './glob-tool'
import { grepTool } from './grep-tool'
import { listFilesTool } from './list-files-tool'
import { readFileTool } from './read-file-tool'
import type { ShellToolOptions } from './shell-tool'
import { shellTool } from './shell-tool'
import { todoReadTool } from './todo-read-tool'
import { todoWriteTool } from './todo-write-tool'
import { createWorkspace } from './workspace'
import { writeFileTool } from './write-file-tool'

/** Options of `createBuiltinTools`: the workspace root the tools are confined to, and the shell's limits. */
export interface BuiltinToolsOptions {
  root: string
  shell?: ShellToolOptions
  /** The tenant the workspace belongs to: its tools' processes share the tenant's limits in the sandbox. */
  tenant?: string
}

/**
 * Creates the nine built-in tools confined to `root`: read_file, list_files, glob, grep, todoread (replay-safe) and
 * write_file, edit_file, shell, todowrite. The root is created when missing. The todo tools share one in-memory list when
 * a run has no tool-state store.
 */
export function createBuiltinTools(options: BuiltinToolsOptions): ToolDef[] {
  mkdirSync(options.root, { recursive: true }) // the workspace root is created when it does not exist yet
  const workspace = createWorkspace(options.root)
  const todoFallback = createMemoryToolStateStore()
  return [
    readFileTool(workspace),
    listFilesTool(workspace),
    globTool(workspace),
    grepTool(workspace),
    todoReadTool(todoFallback),
    writeFileTool(workspace),
    editFileTool(workspace),
    shellTool(workspace, options.shell ?? {}),
    todoWriteTool(todoFallback),
  ]
}

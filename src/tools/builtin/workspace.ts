import path from 'node:path'
import { ToolError } from '../tool'
import { createFileWorker } from './file-worker-client'
import type { FileOperation, FileWorkerOptions } from './file-worker-client'
import { FileToolFailure } from './file-worker/file-tool-failure'
import { resolveInside } from './file-worker/resolve-path'

/** A path inside the workspace: its real absolute path, and the same path relative to the root (posix, `.` for the root). */
export interface WorkspacePath {
  readonly absolute: string
  readonly relative: string
}

/** The directory the file tools may touch, and the worker that does their file work. */
export interface Workspace {
  /** The root as given, made absolute. */
  readonly root: string
  /** Resolves `userPath` (relative to the root, or absolute inside it); throws `ToolError` `path_outside_workspace` on an escape. */
  resolve(userPath: string): Promise<WorkspacePath>
  /**
   * Runs one file operation in a worker process confined to the root (inside the sandbox when one is configured),
   * bounded in time and memory; its failures throw `ToolError` with a stable code and no host path.
   */
  run(operation: FileOperation, signal: AbortSignal): Promise<string>
}

/**
 * Creates a workspace rooted at `root`. Escapes through `..`, absolute paths outside the root and symbolic links whose
 * real path lies outside are refused, also for paths that do not exist yet (the nearest existing parent is checked).
 * File operations run in a worker process per call (`options`: its sandbox, tenant and bounds).
 */
export function createWorkspace(root: string, options: FileWorkerOptions = {}): Workspace {
  const absoluteRoot = path.resolve(root)
  let worker: ReturnType<typeof createFileWorker> | undefined
  return {
    root: absoluteRoot,
    resolve: async userPath => {
      try {
        return await resolveInside(absoluteRoot, userPath)
      } catch (error) {
        throw error instanceof FileToolFailure ? new ToolError(error.message, error.code) : error
      }
    },
    run: (operation, signal) => (worker ??= createFileWorker(absoluteRoot, options))(operation, signal),
  }
}

/** Folder of the workspace where outputs over 256 KiB are kept. */
export const PERSISTED_OUTPUTS_FOLDER = 'tool-results'

/**
 * A writer of large tool outputs (the agent's `behavior.persistOutput`) into `tool-results/` of `workspace`, through
 * its file worker: the folder and the file are refused when a link stands in their place. Returns the
 * workspace-relative path, which `read_file` reads.
 */
export function workspaceOutputWriter(workspace: Workspace): (name: string, content: string) => Promise<{ path: string; bytes: number }> {
  return async (name, content) => {
    const path = await workspace.run({ op: 'persist', folder: PERSISTED_OUTPUTS_FOLDER, name, content }, new AbortController().signal)
    return { path, bytes: Buffer.byteLength(content) }
  }
}

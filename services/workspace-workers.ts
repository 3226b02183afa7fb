import path from 'node:path'
import { createFileWorkerPool } from 'zidane/tools'
import type { FileWorkerPool, FileWorkerPoolOptions } from 'zidane/tools'
import type { ToolOffer } from './tool-selection'

/**
 * Bounds of the services' warm file workers: an idle worker stays 30 s (a run's next turn, the session's next
 * prompt), a session's workspace has at most 4 live workers (its calls queue past them; a worker answers a
 * `write_file` in about 3 ms) and the process 32 (an idle one of another workspace is killed to make room).
 */
export const SERVICES_FILE_WORKERS: Required<Pick<FileWorkerPoolOptions, 'idleMs' | 'maxWorkers' | 'maxWorkersPerScope'>> = { idleMs: 30_000, maxWorkers: 32, maxWorkersPerScope: 4 }

/** The services' pool of warm file workers, within {@link SERVICES_FILE_WORKERS} unless `options` says otherwise. */
export function createServicesFileWorkers(options: FileWorkerPoolOptions = {}): FileWorkerPool {
  return createFileWorkerPool({ ...SERVICES_FILE_WORKERS, ...options })
}

/**
 * The folder the file worker of workspace `root` is confined to: the session's own workspace, never its tenant's
 * folder. A worker checks a path and then opens it by name, so a session whose own `shell` swaps a folder for a link
 * (`d -> ../s2`) between the two can make the worker follow it; bound to the tenant's folder, that reached the
 * tenant's other sessions (a test read another session's file after 39-68 calls). Warm workers are therefore kept per
 * session workspace (across its runs), not shared by a tenant's sessions.
 */
export function fileWorkerFolder(root: string): string {
  return path.resolve(root)
}

/** `offer` whose file tools take their workers from `pool`, each confined to its session's workspace ({@link fileWorkerFolder}). */
export function withFileWorkers(offer: ToolOffer, pool: FileWorkerPool): ToolOffer {
  return {
    ...offer,
    options: (root, tenant) => {
      const options = offer.options(root, tenant)
      return { ...options, files: { ...options.files, pool, confineTo: fileWorkerFolder(root) } }
    },
  }
}

import path from 'node:path'
import { createFileWorkerPool } from 'zidane/tools'
import type { FileWorkerPool, FileWorkerPoolOptions } from 'zidane/tools'
import type { ToolOffer } from './tool-selection'
import { folderSegment } from './workspace'

/**
 * Bounds of the services' shared file workers: an idle worker stays 30 s (a run's next prompt, a burst's next
 * session of the tenant), a tenant's folder has at most 4 live workers (its calls queue past them; a worker answers
 * a `write_file` in about 3 ms) and the process 32 (an idle one of another tenant is killed to make room).
 */
export const SERVICES_FILE_WORKERS: Required<Pick<FileWorkerPoolOptions, 'idleMs' | 'maxWorkers' | 'maxWorkersPerScope'>> = { idleMs: 30_000, maxWorkers: 32, maxWorkersPerScope: 4 }

/** The services' pool of warm file workers, within {@link SERVICES_FILE_WORKERS} unless `options` says otherwise. */
export function createServicesFileWorkers(options: FileWorkerPoolOptions = {}): FileWorkerPool {
  return createFileWorkerPool({ ...SERVICES_FILE_WORKERS, ...options })
}

/**
 * The folder the file worker of workspace `root` (of `tenant`) is confined to: the tenant's folder
 * `<workspaceRoot>/<tenant>` when `root` is a session's folder right in it, so one warm worker serves every session
 * of the tenant; else `root` itself: a legacy flat workspace, and the sessions without a tenant (they share the `%`
 * folder, but each is a tenant of its own).
 */
export function fileWorkerFolder(workspaceRoot: string, root: string, tenant: string): string {
  const tenantFolder = path.dirname(path.resolve(root))
  const ownFolder = path.basename(tenantFolder) === folderSegment(tenant) && folderSegment(tenant) !== '%'
  return ownFolder && path.dirname(tenantFolder) === path.resolve(workspaceRoot) ? tenantFolder : path.resolve(root)
}

/** `offer` whose file tools take their workers from `pool`, each confined to its tenant's folder ({@link fileWorkerFolder}). */
export function withFileWorkers(offer: ToolOffer, pool: FileWorkerPool, workspaceRoot: string): ToolOffer {
  return {
    ...offer,
    options: (root, tenant) => {
      const options = offer.options(root, tenant)
      return { ...options, files: { ...options.files, pool, confineTo: fileWorkerFolder(workspaceRoot, root, tenant) } }
    },
  }
}

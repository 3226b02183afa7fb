import path from 'node:path'
import { createFileWorkerPool } from 'zidane/tools'
import type { FileWorkerPool, FileWorkerPoolOptions } from 'zidane/tools'
import type { ToolOffer } from './tool-selection'

/**
 * Live file workers one tenant may have when `ZIDANE_FILE_WORKERS_PER_TENANT` is unset: 4 sessions' worth, about
 * 880 MB resident at 55 MB each, within the tenant's cgroup memory (2 GiB by default).
 */
export const FILE_WORKERS_PER_TENANT = 16

/**
 * Bounds of the services' warm file workers: an idle worker stays 30 s (a run's next turn, the session's next
 * prompt); a session's workspace has at most 4 live workers (its calls queue past them; a worker answers a
 * `write_file` in about 3 ms) and a tenant {@link FILE_WORKERS_PER_TENANT} (its calls wait past them for one of its
 * own); the process keeps 32, killing the idle worker of another workspace unused the longest to make room, and starts
 * a call's worker past 32 rather than make it wait for another tenant's busy ones. Room is made with the workers of
 * sessions whose run ended (`settle`) at once, with those of running sessions only once idle 5 s: a run's worker is
 * not taken between its turns, which made busy sessions start worker after worker.
 */
export const SERVICES_FILE_WORKERS: Required<Pick<FileWorkerPoolOptions, 'idleMs' | 'maxWorkers' | 'maxWorkersPerScope' | 'maxWorkersPerTenant' | 'evictAfterMs'>> = { idleMs: 30_000, maxWorkers: 32, maxWorkersPerScope: 4, maxWorkersPerTenant: FILE_WORKERS_PER_TENANT, evictAfterMs: 5_000 }

/**
 * The services' pool of warm file workers, within {@link SERVICES_FILE_WORKERS}, a tenant's bound from
 * `ZIDANE_FILE_WORKERS_PER_TENANT` in `env` when set (a positive integer), unless `options` says otherwise.
 */
export function createServicesFileWorkers(options: FileWorkerPoolOptions = {}, env: NodeJS.ProcessEnv = {}): FileWorkerPool {
  return createFileWorkerPool({ ...SERVICES_FILE_WORKERS, ...fileWorkerBoundsOf(env), ...options })
}

/** The bounds `env` sets over {@link SERVICES_FILE_WORKERS}: `ZIDANE_FILE_WORKERS_PER_TENANT`, when a positive integer. */
export function fileWorkerBoundsOf(env: NodeJS.ProcessEnv): Pick<FileWorkerPoolOptions, 'maxWorkersPerTenant'> {
  const perTenant = Number(env.ZIDANE_FILE_WORKERS_PER_TENANT)
  return env.ZIDANE_FILE_WORKERS_PER_TENANT !== undefined && Number.isInteger(perTenant) && perTenant > 0 ? { maxWorkersPerTenant: perTenant } : {}
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
    settle: root => pool.settle(fileWorkerFolder(root)),
  }
}

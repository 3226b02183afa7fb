import path from 'node:path'
import { createFileWorkerPool } from 'zidane/tools'
import type { FileWorkerPool, FileWorkerPoolOptions } from 'zidane/tools'
import type { ToolOffer } from './tool-selection'
import { workspacePath } from './workspace'

/**
 * Live file workers one tenant's sessions share when `ZIDANE_FILE_WORKERS_PER_TENANT` is unset: about
 * 880 MB resident at 55 MB each, within the tenant's cgroup memory (2 GiB by default).
 */
export const FILE_WORKERS_PER_TENANT = 16

/**
 * Bounds of the services' warm file workers: an idle worker stays 30 s (a run's next turn, the session's next
 * prompt); the sessions of one tenant share its workers ({@link fileWorkerFolder}), at most
 * {@link FILE_WORKERS_PER_TENANT} live (its calls wait past them for one of its own); the process keeps 32, killing
 * the idle worker of another tenant unused the longest to make room, and starts a call's worker past 32 rather than
 * make it wait for another tenant's busy ones. Room is made with the workers of tenants one of whose runs just ended
 * (`settle`) at once, with the others only once idle 5 s.
 */
export const SERVICES_FILE_WORKERS: Required<Pick<FileWorkerPoolOptions, 'idleMs' | 'maxWorkers' | 'maxWorkersPerScope' | 'maxWorkersPerTenant' | 'evictAfterMs'>> = { idleMs: 30_000, maxWorkers: 32, maxWorkersPerScope: FILE_WORKERS_PER_TENANT, maxWorkersPerTenant: FILE_WORKERS_PER_TENANT, evictAfterMs: 5_000 }

/**
 * The services' pool of warm file workers, within {@link SERVICES_FILE_WORKERS}, a tenant's bound from
 * `ZIDANE_FILE_WORKERS_PER_TENANT` in `env` when set (a positive integer), unless `options` says otherwise.
 */
export function createServicesFileWorkers(options: FileWorkerPoolOptions = {}, env: NodeJS.ProcessEnv = {}): FileWorkerPool {
  return createFileWorkerPool({ ...SERVICES_FILE_WORKERS, ...fileWorkerBoundsOf(env), ...options })
}

/**
 * The bounds `env` sets over {@link SERVICES_FILE_WORKERS}: `ZIDANE_FILE_WORKERS_PER_TENANT`, when a positive integer
 * (a tenant's workers are one scope: its folder).
 */
export function fileWorkerBoundsOf(env: NodeJS.ProcessEnv): Pick<FileWorkerPoolOptions, 'maxWorkersPerTenant' | 'maxWorkersPerScope'> {
  const perTenant = Number(env.ZIDANE_FILE_WORKERS_PER_TENANT)
  return env.ZIDANE_FILE_WORKERS_PER_TENANT !== undefined && Number.isInteger(perTenant) && perTenant > 0 ? { maxWorkersPerTenant: perTenant, maxWorkersPerScope: perTenant } : {}
}

/**
 * The folder the file workers of workspace `root` are confined to: its tenant's folder when `root` is a session's
 * workspace under `workspaceRoot` (`<workspaceRoot>/<tenant>/<session>`), so one warm worker serves every session of
 * the tenant; the workspace itself otherwise (a flat folder of an older layout sits beside other tenants' folders, and
 * the sessions whose key names no tenant, started without the gateway, share a folder but no tenant).
 * The worker opens every path one folder at a time through descriptors, never following a link, so a session whose
 * own `shell` swaps a folder for a link to another session (`d -> ../s2`) cannot lead the worker there
 * (`src/tools/builtin/file-worker/beneath.ts`).
 */
export function fileWorkerFolder(workspaceRoot: string, root: string): string {
  const workspace = path.resolve(root)
  const tenantFolder = path.dirname(workspace)
  const shared = path.dirname(tenantFolder) === path.resolve(workspaceRoot) && path.basename(tenantFolder) !== UNNAMED_TENANT_FOLDER
  return shared ? tenantFolder : workspace
}

/** The folder of sessions whose key names no tenant ({@link workspacePath}): each is a tenant of its own, none shares. */
const UNNAMED_TENANT_FOLDER = workspacePath('')[0]

/**
 * `offer` whose file tools take their workers from `pool`, each confined to its tenant's folder below `workspaceRoot`
 * ({@link fileWorkerFolder}).
 */
export function withFileWorkers(offer: ToolOffer, pool: FileWorkerPool, workspaceRoot: string): ToolOffer {
  return {
    ...offer,
    options: (root, tenant) => {
      const options = offer.options(root, tenant)
      return { ...options, files: { ...options.files, pool, confineTo: fileWorkerFolder(workspaceRoot, root) } }
    },
    settle: root => pool.settle(fileWorkerFolder(workspaceRoot, root)),
  }
}

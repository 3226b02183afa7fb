import { ToolError } from '../tool'
import type { CommandSandbox } from './command-sandbox'
import { warmWorker } from './file-worker-process'
import type { WarmWorker } from './file-worker-process'
import { startCommand } from './run-command'
import type { StartCommandOptions } from './run-command'

/** Bounds of a {@link FileWorkerPool}. */
export interface FileWorkerPoolOptions {
  /** Time an idle worker waits for the next call of its scope before it is killed. Default {@link FILE_WORKER_IDLE_MS}. */
  idleMs?: number
  /** Live workers of every scope together (busy and idle); a call past it waits for one. Default: no bound. */
  maxWorkers?: number
  /** Live workers of one scope (busy and idle); a call past it waits for one of them. Default: no bound. */
  maxWorkersPerScope?: number
  /** Idle workers kept per scope; one given back past it is killed. Default: `maxWorkersPerScope`. */
  maxIdlePerScope?: number
  /**
   * Time a worker must have been idle before a call of another scope may kill it to make room under `maxWorkers`
   * (the least recently used first); until then that call waits. A worker idle between the turns of a run is not
   * killed and restarted at every turn that way. Default {@link FILE_WORKER_EVICT_AFTER_MS}.
   */
  evictAfterMs?: number
  /** Observes every worker process started, with the process group it leads (tests count and find them this way). */
  onWorkerStart?: (group: number | undefined) => void
}

/**
 * Warm file workers, reused from call to call of the same scope: a worker is handed only to calls whose start options
 * are the same as its own (command, folder it is confined to, environment, tenant, read-only paths, sandbox), so a
 * worker of one tenant's folder never serves another's. One call at a time per worker.
 */
export interface FileWorkerPool {
  /**
   * A live worker started with `start` (an idle one of the same scope, else a new one), its idle timer stopped. Waits
   * while the pool is at a cap; throws `ToolError` `aborted` when `signal` aborts first, `tool_unavailable` once closed.
   */
  acquire(start: StartCommandOptions, signal: AbortSignal): Promise<WarmWorker>
  /** Gives a worker back after its call: kept idle when `reusable` (and under the caps), else killed. */
  release(worker: WarmWorker, reusable: boolean): void
  /** Live workers (busy and idle, not yet killed). */
  liveWorkers(): number
  /** Kills every worker and fails the calls still waiting; later calls fail with `tool_unavailable`. */
  close(): void
}

/** Default time an idle worker waits for the next call of its scope before it exits. */
export const FILE_WORKER_IDLE_MS = 5000
/** Default time a worker must have been idle before another scope's call may take its place. */
export const FILE_WORKER_EVICT_AFTER_MS = 500

interface Scope { key: string; start: StartCommandOptions; live: Set<WarmWorker>; idle: WarmWorker[] }
interface Waiter { scope: Scope; resolve: (worker: WarmWorker) => void; reject: (error: ToolError) => void }

/** A {@link FileWorkerPool} within `options`' bounds. */
export function createFileWorkerPool(options: FileWorkerPoolOptions = {}): FileWorkerPool {
  const idleMs = options.idleMs ?? FILE_WORKER_IDLE_MS
  const maxWorkers = options.maxWorkers ?? Infinity
  const perScope = options.maxWorkersPerScope ?? Infinity
  const maxIdle = options.maxIdlePerScope ?? perScope
  const evictAfterMs = options.evictAfterMs ?? FILE_WORKER_EVICT_AFTER_MS
  const idleSince = new Map<WarmWorker, number>()
  let pumpTimer: NodeJS.Timeout | undefined
  const scopes = new Map<string, Scope>()
  const scopeOf = new Map<WarmWorker, Scope>()
  const sandboxes = new WeakMap<CommandSandbox, number>()
  const waiters: Waiter[] = []
  let closed = false

  let sandboxCount = 0
  const sandboxId = (sandbox: CommandSandbox): number => {
    const id = sandboxes.get(sandbox) ?? (sandboxCount += 1)
    sandboxes.set(sandbox, id)
    return id
  }
  // Every start option is part of the key: a worker serves only calls that would have started the very same worker.
  const keyOf = (start: StartCommandOptions): string => JSON.stringify([start.sandbox === undefined ? 0 : sandboxId(start.sandbox), start.command, start.cwd, start.env ?? null, start.wrapOptions ?? null])
  const forget = (worker: WarmWorker): void => {
    idleSince.delete(worker)
    const scope = scopeOf.get(worker)
    if (scope === undefined) return
    scopeOf.delete(worker)
    scope.live.delete(worker)
    const at = scope.idle.indexOf(worker)
    if (at >= 0) scope.idle.splice(at, 1)
    clearTimeout(worker.idleTimer)
    if (scope.live.size === 0) scopes.delete(scope.key)
  }
  const kill = (worker: WarmWorker): void => {
    forget(worker)
    worker.process.kill()
  }
  const startIn = (scope: Scope): WarmWorker => {
    const worker = warmWorker(startCommand(scope.start))
    scopes.set(scope.key, scope)
    scopeOf.set(worker, scope)
    scope.live.add(worker)
    options.onWorkerStart?.(worker.process.group)
    worker.process.onExit(() => {
      forget(worker)
      pump()
    })
    return worker
  }
  /** The worker idle the longest in a scope other than `scope`, if idle for `evictAfterMs` at least, to make room under `maxWorkers`. */
  const idleElsewhere = (scope: Scope): WarmWorker | undefined => {
    let oldest: WarmWorker | undefined
    for (const [worker, since] of idleSince) if (scopeOf.get(worker) !== scope && since <= (idleSince.get(oldest as WarmWorker) ?? Infinity)) oldest = worker
    if (oldest === undefined) return undefined
    const waitMs = (idleSince.get(oldest) ?? 0) + evictAfterMs - Date.now()
    if (waitMs <= 0) return oldest
    // Not idle long enough yet: look again once it is.
    pumpTimer ??= setTimeout(() => { pumpTimer = undefined; pump() }, waitMs)
    return undefined
  }
  const serve = (scope: Scope): WarmWorker | undefined => {
    for (let worker = scope.idle.shift(); worker !== undefined; worker = scope.idle.shift()) {
      if (!worker.dead) return taken(worker)
      kill(worker)
    }
    if (scope.live.size >= perScope) return undefined
    if (scopeOf.size >= maxWorkers) {
      const victim = idleElsewhere(scope)
      if (victim === undefined) return undefined
      kill(victim)
    }
    return taken(startIn(scope))
  }
  const taken = (worker: WarmWorker): WarmWorker => {
    idleSince.delete(worker)
    clearTimeout(worker.idleTimer)
    worker.process.keepAlive(true)
    return worker
  }
  function pump(): void {
    for (let index = 0; index < waiters.length;) {
      const waiter = waiters[index] as Waiter
      const worker = serve(waiter.scope)
      if (worker === undefined) index += 1
      else {
        waiters.splice(index, 1)
        waiter.resolve(worker)
      }
    }
  }
  const keepIdle = (worker: WarmWorker, scope: Scope): void => {
    scope.idle.push(worker)
    idleSince.set(worker, Date.now())
    worker.process.keepAlive(false)
    worker.idleTimer = setTimeout(() => kill(worker), idleMs)
    worker.idleTimer.unref()
  }

  return {
    acquire: (start, signal) => {
      if (closed) return Promise.reject(new ToolError('The file tools are shutting down.', 'tool_unavailable'))
      if (signal.aborted) return Promise.reject(abortedError())
      const key = keyOf(start)
      const scope = scopes.get(key) ?? { key, start, live: new Set<WarmWorker>(), idle: [] }
      if (waiters.length === 0) {
        const worker = serve(scope)
        if (worker !== undefined) return Promise.resolve(worker)
      }
      return new Promise((resolve, reject) => {
        const onAbort = (): void => {
          const at = waiters.indexOf(waiter)
          if (at >= 0) waiters.splice(at, 1)
          reject(abortedError())
        }
        const waiter: Waiter = {
          scope,
          resolve: worker => { signal.removeEventListener('abort', onAbort); resolve(worker) },
          reject: error => { signal.removeEventListener('abort', onAbort); reject(error) },
        }
        signal.addEventListener('abort', onAbort, { once: true })
        waiters.push(waiter)
        pump()
      })
    },
    release: (worker, reusable) => {
      const scope = scopeOf.get(worker)
      if (scope === undefined || closed || !reusable || worker.dead) kill(worker)
      else keepIdle(worker, scope)
      pump()
      // A call waiting for this scope took the worker above; past the idle bound the oldest idle one goes.
      while (scope !== undefined && scope.idle.length > maxIdle) kill(scope.idle[0] as WarmWorker)
    },
    liveWorkers: () => scopeOf.size,
    close: () => {
      closed = true
      clearTimeout(pumpTimer)
      for (const worker of [...scopeOf.keys()]) kill(worker)
      for (const waiter of waiters.splice(0)) waiter.reject(new ToolError('The file tools are shutting down.', 'tool_unavailable'))
    },
  }
}

function abortedError(): ToolError {
  return new ToolError('The call was aborted.', 'aborted')
}

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
  /**
   * Live workers of every scope together that the pool keeps: a call past it kills the idle worker of another scope
   * unused the longest (idle for `evictAfterMs` at least) to make room, and when there is none it starts its worker
   * anyway, within its tenant's bound, rather than wait for another tenant's; idle workers past it are killed once idle
   * `evictAfterMs`. So it bounds the idle workers kept, never makes one tenant's call wait for another's. Default: no bound.
   */
  maxWorkers?: number
  /** Live workers of one scope (busy and idle); a call past it waits for one of them. Default: no bound. */
  maxWorkersPerScope?: number
  /**
   * Live workers of one tenant's scopes together (busy and idle; the tenant of `wrapOptions.tenant`, the starts that
   * name none counting as one tenant). A call past it kills an idle worker of another scope of its tenant (idle for
   * `evictAfterMs` at least) or waits for one of its tenant's workers, never another tenant's. Default: no bound.
   */
  maxWorkersPerTenant?: number
  /** Idle workers kept per scope; one given back past it is killed. Default: `maxWorkersPerScope`. */
  maxIdlePerScope?: number
  /**
   * Time a worker must have been idle before a call of another scope may kill it to make room (the least recently used
   * first). A worker idle between the turns of a run is not killed and restarted at every turn that way; one whose
   * folder is settled (`FileWorkerPool.settle`) may be killed at once. Default {@link FILE_WORKER_EVICT_AFTER_MS}.
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
   * while its scope or its tenant is at its bound, only for a worker of that scope or tenant; throws `ToolError` `aborted` when `signal` aborts first, `tool_unavailable` once closed.
   * Waiting calls are served by `caller` (a session's folder; default the scope) fewest workers in use first, then in
   * order: a session with many slow calls queued makes a sibling's call wait for one worker to come free, not for all
   * of its own calls.
   */
  acquire(start: StartCommandOptions, signal: AbortSignal, caller?: string): Promise<WarmWorker>
  /** Gives a worker back after its call: kept idle when `reusable` (and under the caps), else killed. */
  release(worker: WarmWorker, reusable: boolean): void
  /** Live workers (busy and idle, not yet killed), of `tenant`'s scopes only when given. */
  liveWorkers(tenant?: string): number
  /**
   * Says that nothing runs in the folder `cwd` for now (its session's run ended): the idle workers of the scopes
   * started there stay warm for its next call, but a call of another scope that needs room may kill them at once,
   * without waiting `evictAfterMs`. A worker of theirs taken again counts as in use as before.
   */
  settle(cwd: string): void
  /** Kills every worker and fails the calls still waiting; later calls fail with `tool_unavailable`. */
  close(): void
}

/** Default time an idle worker waits for the next call of its scope before it exits. */
export const FILE_WORKER_IDLE_MS = 5000
/** Default time a worker must have been idle before another scope's call may take its place. */
export const FILE_WORKER_EVICT_AFTER_MS = 500

/** The workers of one start (one session's workspace); `tenant` names the tenant whose bound they count in. */
interface Scope { key: string; start: StartCommandOptions; tenant: string; live: Set<WarmWorker>; idle: WarmWorker[] }
interface Waiter { key: string; start: StartCommandOptions; caller: string; resolve: (worker: WarmWorker) => void; reject: (error: ToolError) => void }

/** A {@link FileWorkerPool} within `options`' bounds. */
export function createFileWorkerPool(options: FileWorkerPoolOptions = {}): FileWorkerPool {
  const idleMs = options.idleMs ?? FILE_WORKER_IDLE_MS
  const maxWorkers = options.maxWorkers ?? Infinity
  const perScope = options.maxWorkersPerScope ?? Infinity
  const perTenant = options.maxWorkersPerTenant ?? Infinity
  const maxIdle = options.maxIdlePerScope ?? perScope
  const evictAfterMs = options.evictAfterMs ?? FILE_WORKER_EVICT_AFTER_MS
  // Insertion order is the order the workers went idle in: the first entry is the least recently used.
  const idleSince = new Map<WarmWorker, number>()
  // Idle workers of settled folders: the first a call that needs room kills.
  const settled = new Set<WarmWorker>()
  const scopes = new Map<string, Scope>()
  const scopeOf = new Map<WarmWorker, Scope>()
  const tenantLive = new Map<string, number>()
  const sandboxes = new WeakMap<CommandSandbox, number>()
  const waiters: Waiter[] = []
  // Workers each caller holds now, and who holds each: waiting calls are served fewest in use first.
  const inUse = new Map<string, number>()
  const holderOf = new Map<WarmWorker, string>()
  const hold = (worker: WarmWorker, caller: string): WarmWorker => {
    holderOf.set(worker, caller)
    inUse.set(caller, (inUse.get(caller) ?? 0) + 1)
    return worker
  }
  const letGo = (worker: WarmWorker): void => {
    const caller = holderOf.get(worker)
    if (caller === undefined) return
    holderOf.delete(worker)
    const left = (inUse.get(caller) ?? 1) - 1
    if (left > 0) inUse.set(caller, left)
    else inUse.delete(caller)
  }
  let wakeTimer: NodeJS.Timeout | undefined
  let wakeAt = Infinity
  let closed = false

  let sandboxCount = 0
  const sandboxId = (sandbox: CommandSandbox): number => {
    const id = sandboxes.get(sandbox) ?? (sandboxCount += 1)
    sandboxes.set(sandbox, id)
    return id
  }
  // Every start option is part of the key: a worker serves only calls that would have started the very same worker.
  const keyOf = (start: StartCommandOptions): string => JSON.stringify([start.sandbox === undefined ? 0 : sandboxId(start.sandbox), start.command, start.cwd, start.env ?? null, start.wrapOptions ?? null])
  const countIn = (tenant: string, delta: number): void => {
    const live = (tenantLive.get(tenant) ?? 0) + delta
    if (live > 0) tenantLive.set(tenant, live)
    else tenantLive.delete(tenant)
  }
  const forget = (worker: WarmWorker): void => {
    idleSince.delete(worker)
    settled.delete(worker)
    const scope = scopeOf.get(worker)
    if (scope === undefined) return
    scopeOf.delete(worker)
    scope.live.delete(worker)
    countIn(scope.tenant, -1)
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
    countIn(scope.tenant, 1)
    options.onWorkerStart?.(worker.process.group)
    worker.process.onExit(() => {
      forget(worker)
      pump()
    })
    return worker
  }
  /** Runs the pump again in `delayMs` (or sooner, if it is to run sooner already). */
  const wakeIn = (delayMs: number): void => {
    if (Date.now() + delayMs >= wakeAt) return
    clearTimeout(wakeTimer)
    wakeAt = Date.now() + delayMs
    wakeTimer = setTimeout(() => { wakeAt = Infinity; pump() }, delayMs)
    wakeTimer.unref() // a look for room to make keeps no process alive
  }
  /** The least recently used idle worker `eligible` accepts, once idle `evictAfterMs`; until then none, and a look again then. */
  const evictable = (eligible: (scope: Scope | undefined) => boolean): WarmWorker | undefined => {
    for (const worker of settled) if (eligible(scopeOf.get(worker))) return worker
    for (const [worker, since] of idleSince) {
      if (!eligible(scopeOf.get(worker))) continue
      const waitMs = since + evictAfterMs - Date.now()
      if (waitMs <= 0) return worker
      wakeIn(waitMs)
      return undefined
    }
    return undefined
  }
  /** Whether `scope`'s tenant may start one more worker, once an idle one of its other scopes is killed if need be. */
  const roomInTenant = (scope: Scope): boolean => {
    if ((tenantLive.get(scope.tenant) ?? 0) < perTenant) return true
    const victim = evictable(other => other !== scope && other?.tenant === scope.tenant)
    if (victim !== undefined) kill(victim)
    return victim !== undefined
  }
  /**
   * Makes room under `maxWorkers` by killing the least recently used idle worker of another scope. With none to kill
   * (every other worker busy, or idle too briefly) the call starts its worker past the bound all the same: one
   * tenant's busy workers never hold up another's call; `trim` brings the idle ones back under the bound.
   */
  const roomInProcess = (scope: Scope): void => {
    if (scopeOf.size < maxWorkers) return
    const victim = evictable(other => other !== scope)
    if (victim !== undefined) kill(victim)
  }
  /** Kills the least recently used idle workers past `maxWorkers`, each once idle `evictAfterMs`. */
  const trim = (): void => {
    while (scopeOf.size > maxWorkers) {
      const victim = evictable(() => true)
      if (victim === undefined) return
      kill(victim)
    }
  }
  const serve = (key: string, start: StartCommandOptions): WarmWorker | undefined => {
    const scope = scopes.get(key) ?? { key, start, tenant: start.wrapOptions?.tenant ?? '', live: new Set<WarmWorker>(), idle: [] }
    // The worker idle the shortest first: the calls of a scope go to as few workers as they need, whose code is hot
    // (a worker's JIT warms with its calls), and the others reach their idle timeout instead of taking turns.
    for (let worker = scope.idle.pop(); worker !== undefined; worker = scope.idle.pop()) {
      if (!worker.dead) return taken(worker)
      kill(worker)
    }
    if (scope.live.size >= perScope || !roomInTenant(scope)) return undefined
    roomInProcess(scope)
    return taken(startIn(scope))
  }
  const taken = (worker: WarmWorker): WarmWorker => {
    idleSince.delete(worker)
    settled.delete(worker)
    clearTimeout(worker.idleTimer)
    worker.process.keepAlive(true)
    return worker
  }
  /**
   * The index of the next waiter to try: the first of those whose callers have the fewest workers in use, among the
   * scopes not `full` (a scope that could not serve one of its waiters serves none of them in this pump).
   */
  const nextWaiter = (full: ReadonlySet<string>): number => {
    let best = -1
    let bestInUse = Infinity
    waiters.forEach((waiter, index) => {
      const held = inUse.get(waiter.caller) ?? 0
      if (held < bestInUse && !full.has(waiter.key)) { best = index; bestInUse = held }
    })
    return best
  }
  function pump(): void {
    // Each pass serves one waiter (the counts change) or finds one more scope that can serve nobody now.
    const full = new Set<string>()
    for (let index = nextWaiter(full); index >= 0; index = nextWaiter(full)) {
      const waiter = waiters[index] as Waiter
      const worker = serve(waiter.key, waiter.start)
      if (worker === undefined) { full.add(waiter.key); continue }
      waiters.splice(index, 1)
      waiter.resolve(hold(worker, waiter.caller))
    }
    trim()
  }
  const keepIdle = (worker: WarmWorker, scope: Scope): void => {
    scope.idle.push(worker)
    idleSince.set(worker, Date.now())
    worker.process.keepAlive(false)
    worker.idleTimer = setTimeout(() => kill(worker), idleMs)
    worker.idleTimer.unref()
  }

  return {
    acquire: (start, signal, caller) => {
      if (closed) return Promise.reject(new ToolError('The file tools are shutting down.', 'tool_unavailable'))
      if (signal.aborted) return Promise.reject(abortedError())
      const key = keyOf(start)
      const holder = caller ?? key
      if (waiters.length === 0) {
        const worker = serve(key, start)
        if (worker !== undefined) return Promise.resolve(hold(worker, holder))
      }
      return new Promise((resolve, reject) => {
        const onAbort = (): void => {
          const at = waiters.indexOf(waiter)
          if (at >= 0) waiters.splice(at, 1)
          reject(abortedError())
        }
        const waiter: Waiter = {
          key,
          start,
          caller: holder,
          resolve: worker => { signal.removeEventListener('abort', onAbort); resolve(worker) },
          reject: error => { signal.removeEventListener('abort', onAbort); reject(error) },
        }
        signal.addEventListener('abort', onAbort, { once: true })
        waiters.push(waiter)
        pump()
      })
    },
    release: (worker, reusable) => {
      letGo(worker)
      const scope = scopeOf.get(worker)
      if (scope === undefined || closed || !reusable || worker.dead) kill(worker)
      else keepIdle(worker, scope)
      pump()
      // A call waiting for this scope took the worker above; past the idle bound the oldest idle one goes.
      while (scope !== undefined && scope.idle.length > maxIdle) kill(scope.idle[0] as WarmWorker)
    },
    liveWorkers: tenant => tenant === undefined ? scopeOf.size : tenantLive.get(tenant) ?? 0,
    settle: cwd => {
      for (const scope of scopes.values()) if (scope.start.cwd === cwd) for (const worker of scope.idle) settled.add(worker)
      pump()
    },
    close: () => {
      closed = true
      clearTimeout(wakeTimer)
      for (const worker of [...scopeOf.keys()]) kill(worker)
      for (const waiter of waiters.splice(0)) waiter.reject(new ToolError('The file tools are shutting down.', 'tool_unavailable'))
    },
  }
}

function abortedError(): ToolError {
  return new ToolError('The call was aborted.', 'aborted')
}

import { raceWithTimeout } from './awakeable'
import type { RestatePromiseRaceLike } from './awakeable'
import type { ReplayTracker } from './replay'
import { DEFAULT_RUN_OPTIONS } from './types'
import type { RestateContextLike, RestateRunOptions } from './types'
import { journalStep } from './step-scope'

/** The execution context a background task runs in (a sandbox, a worker); opaque to this module. */
export type ExecutionHandle = Readonly<Record<string, unknown>>

/** How a background task ended. */
export interface TaskExitInfo {
  exitCode: number | null
  signal?: string | null
  /** Tail of the task's output, when the host keeps it. */
  output?: string
  endedAt?: number
}

/** One task of the host's registry, as `listBackground` reports it. */
export interface TaskEntry {
  id: string
  status: 'running' | 'exited' | 'killed' | 'failed'
  exit?: TaskExitInfo
}

/** Options for `restateWaitBackground`. */
export interface RestateWaitBackgroundOptions {
  /** The Restate context the awakeable + journal entries bind to. */
  ctx: RestateContextLike
  /** Journal-entry prefix. Default `wait-background`. */
  entryPrefix?: string
  /** Snapshot the host's task registry. Called AFTER `register`, inside a journaled `ctx.run`. */
  probe: (handle: ExecutionHandle, taskId: string) => readonly TaskEntry[] | Promise<readonly TaskEntry[]>
  /** Durable race combinator for the timeout race: pass `RestatePromise`. Required when a timeout applies. */
  promises?: RestatePromiseRaceLike
  /** Persist `awakeableId` as the exit resumer of `taskId` BEFORE the probe. Runs inside a journaled `ctx.run`. */
  register: (awakeableId: string, taskId: string, handle: ExecutionHandle) => void | Promise<void>
  /** Per-invocation replay tracker. */
  replayTracker?: ReplayTracker
  /** `ctx.run` options of the journaled phases. Default `{ maxRetryAttempts: 1 }`. */
  runOptions?: RestateRunOptions
  /** Finalize the resumer row once the wait resolves (`exit` is `null` on timeout / unknown task). Runs inside `ctx.run`. */
  settle?: (awakeableId: string, taskId: string, exit: TaskExitInfo | null, handle: ExecutionHandle) => void | Promise<void>
  /** Default park deadline in milliseconds; a per-call `timeoutMs` wins. Unset / non-positive = park until resolved. */
  timeoutMs?: number
}

type ProbeOutcome = { kind: 'absent' } | { kind: 'exited'; exit: TaskExitInfo } | { kind: 'running' }

/**
 * Build a durable `waitBackground`: mint an awakeable, then in one journaled entry register it as the task's exit
 * resumer and probe the registry (terminated → return at once, absent → `null`, running → park on the awakeable,
 * raced against a durable timer). Registering before probing closes the race with a task that exits in between.
 */
export function restateWaitBackground(options: RestateWaitBackgroundOptions): (handle: ExecutionHandle, taskId: string, opts?: { signal?: AbortSignal; timeoutMs?: number }) => Promise<TaskExitInfo | null> {
  const { ctx } = options
  const prefix = options.entryPrefix ?? 'wait-background'
  const runOptions = options.runOptions ?? DEFAULT_RUN_OPTIONS
  let seq = 0
  return async (handle, taskId, callOptions = {}) => {
    const entry = `${prefix}-${taskId}-${++seq}`
    const awakeable = ctx.awakeable<TaskExitInfo>()
    const probed = await journalStep<ProbeOutcome>(ctx, `${entry}-probe`, async () => {
      options.replayTracker?.markLive()
      await options.register(awakeable.id, taskId, handle)
      const task = (await options.probe(handle, taskId)).find(candidate => candidate.id === taskId)
      if (!task) return { kind: 'absent' }
      if (task.status !== 'running') return { kind: 'exited', exit: task.exit ?? { exitCode: null } }
      return { kind: 'running' }
    }, runOptions)
    let exit: TaskExitInfo | null = probed.kind === 'exited' ? probed.exit : null
    if (probed.kind === 'running') {
      const timeoutMs = callOptions.timeoutMs ?? options.timeoutMs
      const outcome = await raceWithTimeout(ctx, awakeable.promise, { timeoutMs, promises: options.promises })
      exit = outcome.timedOut ? null : outcome.value
    }
    const settle = options.settle
    if (settle) await journalStep(ctx, `${entry}-settle`, async () => { await settle(awakeable.id, taskId, exit, handle) }, runOptions)
    return exit
  }
}

import { measureWorkspaceUsage, quotaProblem } from './file-worker/workspace-quota'
import type { UsageWalkBounds, WorkspaceUsage } from './file-worker/workspace-quota'

/** A running check of a workspace's disk use while a command runs. */
export interface QuotaWatch {
  /** Why the workspace went past its quota, once it did (the command was then stopped through `onExceeded`). */
  readonly exceeded: string | undefined
  /** Ends the checks. */
  stop(): void
}

/** Options of `watchWorkspaceQuota`. */
export interface QuotaWatchOptions extends UsageWalkBounds {
  /** Least time between two measurements; a slow walk spaces them more (four times its duration). Default 250 ms. */
  intervalMs?: number
}

/**
 * Measures `workspace` now, then again and again until `stop()`: when a measurement finds it grown past its quota
 * (or past its size now, for a workspace already over it, so a command that deletes files still runs) it calls
 * `onExceeded` once. A walk cut short by its time bound is skipped, not taken for an overrun (the host may just be
 * busy). A command can write for one interval before it is caught: the quota is exceeded by what it writes in that time.
 */
export async function watchWorkspaceQuota(workspace: string, quotaBytes: number, onExceeded: () => void, options: QuotaWatchOptions = {}): Promise<QuotaWatch> {
  const start = await measureWorkspaceUsage(workspace, options).catch(() => undefined)
  const allowance = start === undefined ? quotaBytes : Math.max(quotaBytes, start.bytes)
  let exceeded: string | undefined
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  const check = async (): Promise<void> => {
    const startedAt = Date.now()
    const usage = await measureWorkspaceUsage(workspace, options).catch(() => undefined)
    if (stopped) return
    exceeded = usage === undefined ? undefined : overrun(usage, start, { quotaBytes, allowance }, options)
    if (exceeded !== undefined) return onExceeded()
    timer = setTimeout(() => void check(), Math.max(options.intervalMs ?? 250, 4 * (Date.now() - startedAt)))
  }
  timer = setTimeout(() => void check(), options.intervalMs ?? 250)
  return {
    get exceeded() { return exceeded },
    stop: () => {
      stopped = true
      clearTimeout(timer)
    },
  }
}

/** Bounds that cut the walk at the start too do not count again: the workspace was already that big. */
function overrun(usage: WorkspaceUsage, start: WorkspaceUsage | undefined, limit: { quotaBytes: number; allowance: number }, bounds: UsageWalkBounds): string | undefined {
  if (usage.cutShort === 'time' || (usage.cutShort !== undefined && usage.cutShort === start?.cutShort)) return undefined
  if (usage.cutShort === undefined && usage.bytes <= limit.allowance) return undefined
  if (limit.allowance > limit.quotaBytes && usage.cutShort === undefined) return `The workspace grew to ${mebibytes(usage.bytes)} MiB while over its quota of ${mebibytes(limit.quotaBytes)} MiB`
  return quotaProblem(usage, limit.quotaBytes, bounds)
}

function mebibytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, '')
}

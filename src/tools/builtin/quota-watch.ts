import { statfsSync } from 'node:fs'
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
  /**
   * Free space the workspace's file system must keep: below it the command is stopped, whatever the workspace's own
   * count says (files deleted while held open use disk no walk sees). Default {@link DISK_FLOOR_BYTES}.
   */
  diskFloorBytes?: number
}

/** Default free space a command may not take the workspace's file system below: 1 GiB. */
export const DISK_FLOOR_BYTES = 1024 * 1024 * 1024

/**
 * Measures `workspace` now, then again and again until `stop()`: when a measurement finds it grown past its quota
 * (or past its size now, for a workspace already over it, so a command that deletes files still runs) it calls
 * `onExceeded` once. A walk cut short by its time bound is skipped, not taken for an overrun (the host may just be
 * busy). A command can write for one interval before it is caught: the quota is exceeded by what it writes in that time.
 */
export async function watchWorkspaceQuota(workspace: string, quotaBytes: number, onExceeded: () => void, options: QuotaWatchOptions = {}): Promise<QuotaWatch> {
  const measure = (): Promise<WorkspaceUsage | undefined> => measureWorkspaceUsage(workspace, options).catch(() => undefined)
  const start = await measure()
  const limit = { quotaBytes, allowance: start === undefined ? quotaBytes : Math.max(quotaBytes, start.bytes), timeouts: 0 }
  let exceeded: string | undefined
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  const check = async (): Promise<void> => {
    const startedAt = Date.now()
    const usage = await measure()
    if (stopped) return
    exceeded = belowDiskFloor(workspace, options.diskFloorBytes ?? DISK_FLOOR_BYTES) ?? (usage === undefined ? UNMEASURABLE : overrun(usage, start, limit, options))
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

/** Why the command must stop when the file system holding `workspace` has less than `floorBytes` free, else undefined. */
function belowDiskFloor(workspace: string, floorBytes: number): string | undefined {
  try {
    const { bavail, bsize } = statfsSync(workspace)
    return bavail * bsize < floorBytes ? `The disk that holds the workspace is almost full (under ${mebibytes(floorBytes)} MiB free), so the command was stopped` : undefined
  } catch {
    return undefined
  }
}

/** A workspace whose root cannot be opened (its owner took the permission away) cannot be held to its quota. */
const UNMEASURABLE = 'The workspace cannot be measured (its root is not readable), so it counts as over its quota'
/** Growth a workspace already past the walk's bounds at the start may show before the command is stopped. */
const CUT_SHORT_GROWTH_BYTES = 1024 * 1024
/** Measurements in a row cut short by time before the workspace counts as over its quota. */
const MAX_TIMEOUTS = 3

/**
 * Whether `usage` passes the quota. A workspace already past the walk's bounds at the start (too deep, too many
 * entries, an unreadable folder) may not grow: its partial count may gain at most 1 MiB. A walk cut short by time is
 * skipped (the host may be busy), three in a row are not.
 */
function overrun(usage: WorkspaceUsage, start: WorkspaceUsage | undefined, limit: { quotaBytes: number; allowance: number; timeouts: number }, bounds: UsageWalkBounds): string | undefined {
  if (usage.cutShort === 'time') return ++limit.timeouts >= MAX_TIMEOUTS ? quotaProblem(usage, limit.quotaBytes, bounds) : undefined
  limit.timeouts = 0
  if (usage.cutShort !== undefined && usage.cutShort === start?.cutShort) return usage.bytes > start.bytes + CUT_SHORT_GROWTH_BYTES ? `${quotaProblem(usage, limit.quotaBytes, bounds) ?? 'Over its quota'}, and it grew while the command ran` : undefined
  if (usage.cutShort === undefined && usage.bytes <= limit.allowance) return undefined
  if (limit.allowance > limit.quotaBytes && usage.cutShort === undefined) return `The workspace grew to ${mebibytes(usage.bytes)} MiB while over its quota of ${mebibytes(limit.quotaBytes)} MiB`
  return quotaProblem(usage, limit.quotaBytes, bounds)
}

function mebibytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, '')
}

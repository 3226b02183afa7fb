import { FileToolFailure } from './file-tool-failure.ts'
import { measureWorkspaceUsageSync, quotaProblem } from './workspace-quota.ts'

/**
 * Refuses a write of `bytes` more when the workspace at `root` would pass `quotaBytes` (no quota: nothing checked). The
 * measuring walk is bounded; a workspace it cannot measure within its bounds counts as over the quota.
 */
export async function assertRoomFor(root: string, quotaBytes: number | undefined, bytes: number): Promise<void> {
  if (quotaBytes === undefined) return
  // Synchronous: the worker does one call at a time, and the walk's many small file calls are cheaper that way.
  const usage = measureWorkspaceUsageSync(root)
  const problem = quotaProblem({ ...usage, bytes: usage.bytes + bytes }, quotaBytes)
  if (problem !== undefined) throw new FileToolFailure('workspace_quota_exceeded', `${problem} with this write of ${bytes} bytes: delete files to make room before writing more.`)
}

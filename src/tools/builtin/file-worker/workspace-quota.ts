import { closeSync, constants, lstatSync, openSync, opendirSync } from 'node:fs'
import type { Stats } from 'node:fs'
import { lstat, open, opendir } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'

/** Bounds of one measuring walk, so a hostile tree (deep, wide, slow) cannot make it expensive. */
export interface UsageWalkBounds {
  /** Folder levels below the root. Default {@link WORKSPACE_WALK_MAX_DEPTH}. */
  maxDepth?: number
  /** Files, folders and links counted. Default {@link WORKSPACE_WALK_MAX_ENTRIES}. */
  maxEntries?: number
  /** Time the walk may take. Default {@link WORKSPACE_WALK_MAX_MS}. */
  maxMs?: number
}

/** Default depth bound of a workspace walk. */
export const WORKSPACE_WALK_MAX_DEPTH = 64
/** Default entry bound of a workspace walk: a workspace with more counts as over its quota. */
export const WORKSPACE_WALK_MAX_ENTRIES = 100_000
/** Default time bound of a workspace walk. */
export const WORKSPACE_WALK_MAX_MS = 5000

/** What a walk saw: disk used (allocated blocks, so sparse files count what they take), entries, and why it stopped early. */
export interface WorkspaceUsage {
  bytes: number
  entries: number
  /** Set when a bound stopped the walk: `bytes` and `entries` are then lower bounds. */
  cutShort?: 'depth' | 'entries' | 'time' | 'unreadable'
}

/** A workspace over its quota (`code` `workspace_quota_exceeded`): writes are refused until files are deleted. */
export class WorkspaceQuotaError extends Error {
  readonly code = 'workspace_quota_exceeded'
  readonly usage: WorkspaceUsage
  readonly quotaBytes: number
  // No parameter properties: the file worker runs this file with types stripped, which refuses them.
  constructor(message: string, usage: WorkspaceUsage, quotaBytes: number) {
    super(message)
    this.name = 'WorkspaceQuotaError'
    this.usage = usage
    this.quotaBytes = quotaBytes
  }
}

const DIRECTORY_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW
const STAT_BATCH = 32

interface Walk {
  readonly maxDepth: number
  readonly maxEntries: number
  readonly deadline: number
  usage: WorkspaceUsage
}

/**
 * Measures the disk `workspace` uses, within `bounds`. Follows no link: every folder is opened with O_NOFOLLOW
 * relative to its parent's open descriptor (`/proc/self/fd/N/name`), so a folder swapped for a link mid-walk is
 * skipped, never followed out of the workspace. Needs Linux's /proc.
 */
export async function measureWorkspaceUsage(workspace: string, bounds: UsageWalkBounds = {}): Promise<WorkspaceUsage> {
  const walk: Walk = { maxDepth: bounds.maxDepth ?? WORKSPACE_WALK_MAX_DEPTH, maxEntries: bounds.maxEntries ?? WORKSPACE_WALK_MAX_ENTRIES, deadline: Date.now() + (bounds.maxMs ?? WORKSPACE_WALK_MAX_MS), usage: { bytes: 0, entries: 0 } }
  const root = await open(workspace, DIRECTORY_FLAGS)
  try {
    await walkFolder(root, 0, walk)
  } finally {
    await root.close()
  }
  return walk.usage
}

async function walkFolder(folder: FileHandle, depth: number, walk: Walk): Promise<void> {
  const base = `/proc/self/fd/${folder.fd}`
  const { names, full } = await readNames(base, walk)
  const subfolders: string[] = []
  for (let start = 0; start < names.length && walk.usage.cutShort === undefined; start += STAT_BATCH) {
    await Promise.all(names.slice(start, start + STAT_BATCH).map(name => countEntry(`${base}/${name}`, name, subfolders, walk)))
    if (Date.now() > walk.deadline) walk.usage.cutShort = 'time'
  }
  if (full) walk.usage.cutShort ??= 'entries'
  for (const name of subfolders) {
    if (walk.usage.cutShort !== undefined) return
    if (depth + 1 > walk.maxDepth) return void (walk.usage.cutShort = 'depth')
    const child = await open(`${base}/${name}`, DIRECTORY_FLAGS).catch((error: NodeJS.ErrnoException) => {
      // A folder its owner made unreadable would hide what it holds: the walk cannot vouch for the total then.
      if (error.code === 'EACCES' || error.code === 'EPERM') walk.usage.cutShort = 'unreadable'
      return undefined
    })
    if (child === undefined) continue // gone, replaced by a link since, or unreadable (above)
    try {
      await walkFolder(child, depth + 1, walk)
    } finally {
      await child.close()
    }
  }
}

/** The entries of the folder at `base`, up to what the entry bound leaves (`full`: it left out some). */
async function readNames(base: string, walk: Walk): Promise<{ names: string[]; full: boolean }> {
  const names: string[] = []
  const folder = await opendir(base, { bufferSize: 256 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EACCES' || error.code === 'EPERM') walk.usage.cutShort = 'unreadable'
    return undefined
  })
  if (folder === undefined) return { names, full: false }
  for await (const entry of folder) {
    if (walk.usage.entries + names.length >= walk.maxEntries) return { names, full: true }
    names.push(entry.name)
  }
  return { names, full: false }
}

async function countEntry(path: string, name: string, subfolders: string[], walk: Walk): Promise<void> {
  const stats = await lstat(path).catch(() => undefined)
  if (stats === undefined) return
  walk.usage.entries += 1
  walk.usage.bytes += stats.blocks * 512
  if (stats.isDirectory()) subfolders.push(name)
}

/**
 * {@link measureWorkspaceUsage} in one synchronous pass, the same walk and bounds: for the file worker, which serves
 * one call at a time, where each asynchronous file call costs a round trip through the thread pool (a write's walk of
 * a small workspace took 0.7 ms of CPU that way). Never in the services' process: it blocks until done.
 */
export function measureWorkspaceUsageSync(workspace: string, bounds: UsageWalkBounds = {}): WorkspaceUsage {
  const walk: Walk = { maxDepth: bounds.maxDepth ?? WORKSPACE_WALK_MAX_DEPTH, maxEntries: bounds.maxEntries ?? WORKSPACE_WALK_MAX_ENTRIES, deadline: Date.now() + (bounds.maxMs ?? WORKSPACE_WALK_MAX_MS), usage: { bytes: 0, entries: 0 } }
  const root = openSync(workspace, DIRECTORY_FLAGS)
  try {
    walkFolderSync(root, 0, walk)
  } finally {
    closeSync(root)
  }
  return walk.usage
}

function walkFolderSync(folder: number, depth: number, walk: Walk): void {
  const base = `/proc/self/fd/${folder}`
  const { names, full } = readNamesSync(base, walk)
  const subfolders: string[] = []
  for (const name of names) {
    if (walk.usage.cutShort !== undefined) break
    const stats = lstatOrUndefined(`${base}/${name}`)
    if (stats === undefined) continue
    walk.usage.entries += 1
    walk.usage.bytes += stats.blocks * 512
    if (stats.isDirectory()) subfolders.push(name)
    if (Date.now() >= walk.deadline) walk.usage.cutShort = 'time'
  }
  if (full) walk.usage.cutShort ??= 'entries'
  for (const name of subfolders) {
    if (walk.usage.cutShort !== undefined) return
    if (depth + 1 > walk.maxDepth) return void (walk.usage.cutShort = 'depth')
    const child = openFolderSync(`${base}/${name}`, walk)
    if (child === undefined) continue // gone, replaced by a link since, or unreadable
    try {
      walkFolderSync(child, depth + 1, walk)
    } finally {
      closeSync(child)
    }
  }
}

/** The folder at `path` opened without following a link; undefined when it cannot be (an unreadable one cuts the walk short). */
function openFolderSync(path: string, walk: Walk): number | undefined {
  try {
    return openSync(path, DIRECTORY_FLAGS)
  } catch (error) {
    // A folder its owner made unreadable would hide what it holds: the walk cannot vouch for the total then.
    if (isDenied(error)) walk.usage.cutShort = 'unreadable'
    return undefined
  }
}

function readNamesSync(base: string, walk: Walk): { names: string[]; full: boolean } {
  const names: string[] = []
  let folder: ReturnType<typeof opendirSync>
  try {
    folder = opendirSync(base, { bufferSize: 256 })
  } catch (error) {
    if (isDenied(error)) walk.usage.cutShort = 'unreadable'
    return { names, full: false }
  }
  try {
    for (let entry = folder.readSync(); entry !== null; entry = folder.readSync()) {
      if (walk.usage.entries + names.length >= walk.maxEntries) return { names, full: true }
      names.push(entry.name)
    }
    return { names, full: false }
  } finally {
    folder.closeSync()
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path)
  } catch {
    return undefined
  }
}

function isDenied(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return code === 'EACCES' || code === 'EPERM'
}

/**
 * Resolves with the usage of `workspace` when it is within `quotaBytes`; otherwise throws {@link WorkspaceQuotaError}
 * with a message for the model. A walk a bound stopped counts as over the quota: a tree past the entry or depth
 * bound is itself too big, and one that cannot be measured in time is not trusted.
 */
export async function assertUnderQuota(workspace: string, quotaBytes: number, bounds: UsageWalkBounds = {}): Promise<WorkspaceUsage> {
  const usage = await measureWorkspaceUsage(workspace, bounds)
  const problem = quotaProblem(usage, quotaBytes, bounds)
  if (problem !== undefined) throw new WorkspaceQuotaError(`${problem}: delete files to make room before writing more.`, usage, quotaBytes)
  return usage
}

/** Why `usage` is over `quotaBytes`, in a sentence, or undefined when it is not. */
export function quotaProblem(usage: WorkspaceUsage, quotaBytes: number, bounds: UsageWalkBounds = {}): string | undefined {
  if (usage.cutShort === 'entries') return `The workspace holds more than ${bounds.maxEntries ?? WORKSPACE_WALK_MAX_ENTRIES} files and folders, over its quota`
  if (usage.cutShort === 'depth') return `The workspace has folders nested deeper than ${bounds.maxDepth ?? WORKSPACE_WALK_MAX_DEPTH} levels, over its quota`
  if (usage.cutShort === 'unreadable') return 'The workspace holds a folder without read permission, which the quota cannot measure, so it counts as over its quota (chmod u+r it)'
  if (usage.cutShort === 'time') return `The workspace could not be measured within ${bounds.maxMs ?? WORKSPACE_WALK_MAX_MS} ms, so it counts as over its quota`
  if (usage.bytes > quotaBytes) return `The workspace uses ${mebibytes(usage.bytes)} MiB, over its quota of ${mebibytes(quotaBytes)} MiB`
  return undefined
}

function mebibytes(bytes: number): string {
  return (bytes / (1024 * 1024)).toFixed(1).replace(/\.0$/, '')
}

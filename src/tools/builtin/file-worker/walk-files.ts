import { opendir } from './sync-fs.ts'
import { openChildFolder } from './beneath.ts'
import type { HeldFolder } from './beneath.ts'
import { WALK_MAX_DEPTH, WALK_MAX_ENTRIES } from './limits.ts'

/** Directory names the recursive tools (`glob`, `grep`) never descend into. */
const IGNORED_DIRECTORIES: ReadonlySet<string> = new Set(['.git', 'node_modules'])

/** A walk's budget: it stops (and says so) after `WALK_MAX_ENTRIES` entries; folders deeper than `WALK_MAX_DEPTH` are skipped. */
export interface WalkBudget {
  entries: number
  truncated: boolean
}

/** A fresh {@link WalkBudget}. */
export function walkBudget(): WalkBudget {
  return { entries: 0, truncated: false }
}

/** A regular file a walk found: its path relative to the walk's folder, and the path that opens it (valid until the walk moves on). */
export interface WalkedFile {
  readonly relative: string
  readonly at: string
}

/**
 * Yields the regular files under the held `folder` as `/`-separated paths relative to it, in sorted order, each with
 * the path that reaches it through its own folder's descriptor. Symbolic links, FIFOs, sockets and devices are
 * neither followed nor yielded, every folder is opened with O_NOFOLLOW through its parent's descriptor (a folder
 * swapped for a link mid-walk is skipped, so a walk never leaves `folder`), unreadable folders are skipped, and
 * `budget` bounds the whole walk.
 */
export async function* walkFiles(folder: HeldFolder, budget: WalkBudget, prefix = '', depth = 0): AsyncGenerator<WalkedFile> {
  const entries = await readEntries(folder.at('.'), budget)
  for (const entry of entries) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`
    if (entry.isFile()) yield { relative, at: folder.at(entry.name) }
    else if (entry.isDirectory() && !IGNORED_DIRECTORIES.has(entry.name) && depth < WALK_MAX_DEPTH) {
      const child = await openChildFolder(folder, entry.name).catch(() => undefined)
      if (child === undefined) continue
      try {
        yield* walkFiles(child, budget, relative, depth + 1)
      } finally {
        await child.close()
      }
    }
  }
}

async function readEntries(directory: string, budget: WalkBudget): Promise<Array<{ name: string; isFile(): boolean; isDirectory(): boolean }>> {
  const entries = []
  try {
    for await (const entry of await opendir(directory)) {
      if (budget.entries >= WALK_MAX_ENTRIES) { budget.truncated = true; break }
      budget.entries += 1
      entries.push(entry)
    }
  } catch {
    // An unreadable directory is skipped.
  }
  return entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0))
}

/** Joins a workspace-relative directory (`.` for the root) with a path relative to it. */
export function joinRelative(directory: string, relative: string): string {
  return directory === '.' ? relative : `${directory}/${relative}`
}

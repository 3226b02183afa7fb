import { opendir } from 'node:fs/promises'
import path from 'node:path'
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

/**
 * Yields the regular files under `directory` as `/`-separated paths relative to it, in sorted order. Symbolic links,
 * FIFOs, sockets and devices are neither followed nor yielded (so a walk never leaves the directory and never opens
 * something that blocks), unreadable directories are skipped, and `budget` bounds the whole walk.
 */
export async function* walkFiles(directory: string, budget: WalkBudget, prefix = '', depth = 0): AsyncGenerator<string> {
  const entries = await readEntries(directory, budget)
  for (const entry of entries) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`
    if (entry.isFile()) yield relative
    else if (entry.isDirectory() && !IGNORED_DIRECTORIES.has(entry.name) && depth < WALK_MAX_DEPTH) yield* walkFiles(path.join(directory, entry.name), budget, relative, depth + 1)
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

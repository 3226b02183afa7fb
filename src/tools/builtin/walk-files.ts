import { readdir } from 'node:fs/promises'
import path from 'node:path'

/** Directory names the recursive tools (`glob`, `grep`) never descend into. */
const IGNORED_DIRECTORIES: ReadonlySet<string> = new Set(['.git', 'node_modules'])

/**
 * Yields the regular files under `directory` as `/`-separated paths relative to it, in sorted order. Symbolic links are
 * neither followed nor yielded (so a walk never leaves the directory), and unreadable directories are skipped.
 */
export async function* walkFiles(directory: string, prefix = ''): AsyncGenerator<string> {
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => [])
  entries.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0))
  for (const entry of entries) {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`
    if (entry.isFile()) yield relative
    else if (entry.isDirectory() && !IGNORED_DIRECTORIES.has(entry.name)) yield* walkFiles(path.join(directory, entry.name), relative)
  }
}

/** Joins a workspace-relative directory (`.` for the root) with a path relative to it. */
export function joinRelative(directory: string, relative: string): string {
  return directory === '.' ? relative : `${directory}/${relative}`
}

import { lstat, opendir } from 'node:fs/promises'
import type { Dirent } from 'node:fs'
import { FileToolFailure, failureOf } from './file-tool-failure.ts'
import { LIST_FILES_MAX_ENTRIES, LIST_FILES_MAX_READ } from './limits.ts'
import { resolveInside } from './resolve-path.ts'

/** `list_files`: the sorted entries of one folder, folders ending with `/` and symbolic links with `@`. */
export async function listFiles(root: string, userPath: string): Promise<string> {
  const directory = await resolveInside(root, userPath)
  const stats = await lstat(directory.absolute).catch((error: unknown) => { throw failureOf(error, directory.relative) })
  if (!stats.isDirectory()) throw new FileToolFailure('not_a_directory', `Not a directory: ${directory.relative}`)
  const names: string[] = []
  let more = false
  const folder = await opendir(directory.absolute).catch((error: unknown) => { throw failureOf(error, directory.relative) })
  for await (const entry of folder) {
    if (names.length === LIST_FILES_MAX_READ) { more = true; break }
    names.push(formatEntry(entry))
  }
  if (names.length === 0) return `(${directory.relative} is empty)`
  names.sort()
  const shown = names.slice(0, LIST_FILES_MAX_ENTRIES).join('\n')
  if (names.length <= LIST_FILES_MAX_ENTRIES && !more) return shown
  const hidden = more ? `More than ${names.length - LIST_FILES_MAX_ENTRIES}` : String(names.length - LIST_FILES_MAX_ENTRIES)
  return `${shown}\n[${hidden} more entries not shown. Use glob to narrow down.]`
}

function formatEntry(entry: Dirent): string {
  if (entry.isDirectory()) return `${entry.name}/`
  if (entry.isSymbolicLink()) return `${entry.name}@`
  return entry.name
}

import { opendir } from './sync-fs.ts'
import type { Dirent } from 'node:fs'
import { openFolderBeneath } from './beneath.ts'
import { FileToolFailure, failureOf } from './file-tool-failure.ts'
import { LIST_FILES_MAX_ENTRIES, LIST_FILES_MAX_READ } from './limits.ts'
import { resolveInside } from './resolve-path.ts'

/** `list_files`: the sorted entries of one folder, folders ending with `/` and symbolic links with `@`. */
export async function listFiles(root: string, userPath: string): Promise<string> {
  const directory = await resolveInside(root, userPath)
  const held = await openFolderBeneath(directory.root, directory.relative).catch((error: unknown) => {
    throw (error as NodeJS.ErrnoException).code === 'ENOTDIR' ? new FileToolFailure('not_a_directory', `Not a directory: ${directory.relative}`) : failureOf(error, directory.relative)
  })
  const names: string[] = []
  let more = false
  try {
    const folder = await opendir(held.at('.')).catch((error: unknown) => { throw failureOf(error, directory.relative) })
    for await (const entry of folder) {
      if (names.length === LIST_FILES_MAX_READ) { more = true; break }
      names.push(formatEntry(entry))
    }
  } finally {
    await held.close()
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

import { constants } from 'node:fs'
import { lstat, open } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { FileToolFailure, failureOf } from './file-tool-failure.ts'
import type { ResolvedPath } from './resolve-path.ts'

/** Flags every open adds: never follow a link swapped in after resolving, never block on a FIFO or a device. */
const SAFE_FLAGS = constants.O_NOFOLLOW | constants.O_NONBLOCK

/**
 * Opens an existing regular file with `flags`. Everything else is refused before it is opened (a FIFO would block
 * the open or the read forever, a device could be endless or have effects on open), and the opened file is checked
 * again, so a file swapped for another kind between the two checks is refused too.
 */
export async function openRegular(file: ResolvedPath, flags: number): Promise<FileHandle> {
  const before = await lstat(file.absolute).catch((error: unknown) => { throw failureOf(error, file.relative) })
  assertRegular(before, file)
  const handle = await open(file.absolute, flags | SAFE_FLAGS).catch((error: unknown) => { throw failureOf(error, file.relative) })
  const after = await handle.stat()
  if (!after.isFile() || after.ino !== before.ino || after.dev !== before.dev) {
    await handle.close()
    throw notRegular(file)
  }
  return handle
}

/**
 * Opens `file` for writing, creating it (mode 0600) when missing and emptying it otherwise; refuses every kind of
 * file but a regular one, as {@link openRegular} does.
 */
export async function openForWrite(file: ResolvedPath): Promise<FileHandle> {
  const existing = await lstat(file.absolute).catch(() => null)
  if (existing !== null) assertRegular(existing, file)
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | SAFE_FLAGS
  const handle = await open(file.absolute, flags, 0o600).catch((error: unknown) => { throw failureOf(error, file.relative) })
  if (!(await handle.stat()).isFile()) {
    await handle.close()
    throw notRegular(file)
  }
  return handle
}

function assertRegular(stats: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }, file: ResolvedPath): void {
  if (stats.isDirectory()) throw new FileToolFailure('not_a_file', `${file.relative} is a directory, not a file; use list_files to see its entries.`)
  if (stats.isSymbolicLink()) throw new FileToolFailure('path_is_link', `${file.relative} is a symbolic link; file tools do not follow it.`)
  if (!stats.isFile()) throw notRegular(file)
}

function notRegular(file: ResolvedPath): FileToolFailure {
  return new FileToolFailure('not_a_file', `${file.relative} is not a regular file (a FIFO, socket or device); file tools only read and write regular files.`)
}

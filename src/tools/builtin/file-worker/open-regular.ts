import { constants } from 'node:fs'
import { lstat, open } from './sync-fs.ts'
import type { WorkerFileHandle as FileHandle } from './sync-fs.ts'
import { FileToolFailure, failureOf } from './file-tool-failure.ts'
import type { ResolvedPath } from './resolve-path.ts'
import { openFolderBeneath, splitLast } from './beneath.ts'

/** Flags every open adds: never follow a link swapped in after resolving, never block on a FIFO or a device. */
const SAFE_FLAGS = constants.O_NOFOLLOW | constants.O_NONBLOCK

/**
 * Opens an existing regular file with `flags`, through its folder held open from the workspace root
 * ({@link openFolderBeneath}). Everything else is refused before it is opened (a FIFO would block the open or the
 * read forever, a device could be endless or have effects on open), and the opened file is checked again, so a file
 * swapped for another kind between the two checks is refused too.
 */
export async function openRegular(file: ResolvedPath, flags: number): Promise<FileHandle> {
  return withFolderOf(file, false, at => openRegularAt(at, file.relative, flags))
}

/** {@link openRegular} of the path `at` (a name inside a held folder, `HeldFolder.at`), named `relative` in errors. */
export async function openRegularAt(at: string, relative: string, flags: number): Promise<FileHandle> {
  const before = await lstat(at).catch((error: unknown) => { throw failureOf(error, relative) })
  assertRegular(before, relative)
  const handle = await open(at, flags | SAFE_FLAGS).catch((error: unknown) => { throw failureOf(error, relative) })
  const after = await handle.stat()
  if (!after.isFile() || after.ino !== before.ino || after.dev !== before.dev) {
    await handle.close()
    throw notRegular(relative)
  }
  return handle
}

/**
 * Opens `file` for writing, creating it (mode 0600) when missing and emptying it otherwise, and with `createFolders`
 * its missing folders (0700); refuses every kind of file but a regular one, as {@link openRegular} does.
 */
export async function openForWrite(file: ResolvedPath, createFolders = false): Promise<FileHandle> {
  return withFolderOf(file, createFolders, async at => {
    const existing = await lstat(at).catch(() => null)
    if (existing !== null) assertRegular(existing, file.relative)
    const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | SAFE_FLAGS
    const handle = await open(at, flags, 0o600).catch((error: unknown) => { throw failureOf(error, file.relative) })
    if (!(await handle.stat()).isFile()) {
      await handle.close()
      throw notRegular(file.relative)
    }
    return handle
  })
}

/** Runs `use` on the path of `file`'s last name inside its folder, held open from the root while it runs. */
async function withFolderOf<T>(file: ResolvedPath, createFolders: boolean, use: (at: string) => Promise<T>): Promise<T> {
  if (file.relative === '.') throw new FileToolFailure('not_a_file', '. is the workspace folder, not a file; use list_files to see its entries.')
  const { folder, name } = splitLast(file.relative)
  const held = await openFolderBeneath(file.root, folder, createFolders).catch((error: unknown) => { throw failureOf(error, file.relative) })
  try {
    return await use(held.at(name))
  } finally {
    await held.close()
  }
}

function assertRegular(stats: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }, relative: string): void {
  if (stats.isDirectory()) throw new FileToolFailure('not_a_file', `${relative} is a directory, not a file; use list_files to see its entries.`)
  if (stats.isSymbolicLink()) throw new FileToolFailure('path_is_link', `${relative} is a symbolic link; file tools do not follow it.`)
  if (!stats.isFile()) throw notRegular(relative)
}

function notRegular(relative: string): FileToolFailure {
  return new FileToolFailure('not_a_file', `${relative} is not a regular file (a FIFO, socket or device); file tools only read and write regular files.`)
}

/**
 * The whole content of an open file when it holds at most `maxBytes`, else null: it reads at most `maxBytes + 1` bytes,
 * however large the file has grown since it was measured (the tenant's own shell can extend it, sparse, in between:
 * `readFile` would then allocate whatever size it finds).
 */
export async function readAtMost(handle: FileHandle, maxBytes: number): Promise<Buffer | null> {
  const chunks: Buffer[] = []
  let total = 0
  for (;;) {
    const chunk = Buffer.allocUnsafe(Math.min(1024 * 1024, maxBytes + 1 - total))
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, total)
    if (bytesRead === 0) return Buffer.concat(chunks, total)
    chunks.push(chunk.subarray(0, bytesRead))
    total += bytesRead
    if (total > maxBytes) return null
  }
}

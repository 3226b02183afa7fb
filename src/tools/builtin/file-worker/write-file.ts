import { failureOf } from './file-tool-failure.ts'
import { openForWrite } from './open-regular.ts'
import { assertRoomFor } from './quota.ts'
import { resolveInside } from './resolve-path.ts'
import type { ResolvedPath } from './resolve-path.ts'

/** `write_file`: replaces (or creates, with missing parent folders) a regular file with `content`, within the workspace's quota. */
export async function writeFile(root: string, userPath: string, content: string, quotaBytes?: number): Promise<string> {
  const file = await resolveInside(root, userPath)
  await assertRoomFor(root, quotaBytes, Buffer.byteLength(content))
  const bytes = await writeWhole(file, content, true)
  return `Wrote ${bytes} bytes to ${file.relative}.`
}

/**
 * Writes `content` as the whole of `file` (a regular file, created 0600 when missing, with its missing folders when
 * `createFolders` is set) and returns its size in bytes.
 */
export async function writeWhole(file: ResolvedPath, content: string, createFolders = false): Promise<number> {
  const handle = await openForWrite(file, createFolders)
  try {
    const bytes = Buffer.from(content, 'utf8')
    await handle.writeFile(bytes).catch((error: unknown) => { throw failureOf(error, file.relative) })
    return bytes.length
  } finally {
    await handle.close()
  }
}

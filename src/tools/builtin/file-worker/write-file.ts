import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { failureOf } from './file-tool-failure.ts'
import { openForWrite } from './open-regular.ts'
import { assertRoomFor } from './quota.ts'
import { resolveInside } from './resolve-path.ts'
import type { ResolvedPath } from './resolve-path.ts'

/** `write_file`: replaces (or creates, with missing parent folders) a regular file with `content`, within the workspace's quota. */
export async function writeFile(root: string, userPath: string, content: string, quotaBytes?: number): Promise<string> {
  const file = await resolveInside(root, userPath)
  await assertRoomFor(root, quotaBytes, Buffer.byteLength(content))
  await mkdir(path.dirname(file.absolute), { recursive: true, mode: 0o700 }).catch((error: unknown) => { throw failureOf(error, file.relative) })
  const bytes = await writeWhole(file, content)
  return `Wrote ${bytes} bytes to ${file.relative}.`
}

/** Writes `content` as the whole of `file` (a regular file, created 0600 when missing) and returns its size in bytes. */
export async function writeWhole(file: ResolvedPath, content: string): Promise<number> {
  const handle = await openForWrite(file)
  try {
    const bytes = Buffer.from(content, 'utf8')
    await handle.writeFile(bytes).catch((error: unknown) => { throw failureOf(error, file.relative) })
    return bytes.length
  } finally {
    await handle.close()
  }
}

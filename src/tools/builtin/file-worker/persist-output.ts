import { realpath } from './sync-fs.ts'
import path from 'node:path'
import { openFolderBeneath } from './beneath.ts'
import { FileToolFailure } from './file-tool-failure.ts'
import { assertRoomFor } from './quota.ts'
import { writeWhole } from './write-file.ts'

const SAFE_NAME = /^[A-Za-z0-9_.-]{1,200}$/

/**
 * Writes a large tool output to `<folder>/<name>` in the workspace and returns the workspace-relative path. Neither
 * the folder nor the file is followed when it is a link: a tenant who planted `tool-results` (or the file) as a link
 * gets a refusal, not a write through it.
 */
export async function persistOutput(root: string, folder: string, name: string, content: string, quotaBytes?: number): Promise<string> {
  if (!SAFE_NAME.test(folder) || !SAFE_NAME.test(name) || folder.startsWith('.') || name.startsWith('.')) throw new FileToolFailure('invalid_input', 'Invalid name for a persisted output')
  const realRoot = await realpath(root)
  await assertRoomFor(realRoot, quotaBytes, Buffer.byteLength(content))
  await ensureRealFolder(realRoot, folder)
  const relative = `${folder}/${name}`
  await writeWhole({ root: realRoot, absolute: path.join(realRoot, relative), relative }, content)
  return relative
}

/** Makes `folder` in the workspace when missing; refuses a link or a file in its place (opened without following). */
async function ensureRealFolder(root: string, folder: string): Promise<void> {
  const held = await openFolderBeneath(root, folder, true).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ELOOP' || error.code === 'ENOTDIR') throw new FileToolFailure('not_a_directory', `${folder} in the workspace is not a folder (a link or a file is in its place); the output cannot be kept there`)
    throw error
  })
  await held.close()
}

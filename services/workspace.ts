import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'

/** The workspace folder of a session key (created on demand): the root its file and shell tools are confined to. */
export async function sessionWorkspace(root: string, sessionKey: string): Promise<string> {
  const folder = join(root, sessionKey.replace(/[^A-Za-z0-9_-]/g, '_'))
  await mkdir(folder, { recursive: true })
  return folder
}

import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * The folder name of a session key: letters, digits and `-` as they are, every other UTF-8 byte (`_` included) as
 * `_` and two hex digits. Injective, so no two keys share a folder (a child's `tenant~s:child-3` and a session named
 * `s_child-3` differ), and never `.`, `..` or a name starting with a dot.
 */
export function workspaceFolderName(sessionKey: string): string {
  let name = ''
  for (const byte of Buffer.from(sessionKey, 'utf8')) {
    const char = String.fromCharCode(byte)
    name += /^[A-Za-z0-9-]$/.test(char) ? char : `_${byte.toString(16).padStart(2, '0')}`
  }
  return name
}

/** The workspace folder of a session key (created on demand): the root its file and shell tools are confined to. */
export async function sessionWorkspace(root: string, sessionKey: string): Promise<string> {
  const folder = join(root, workspaceFolderName(sessionKey))
  await mkdir(folder, { recursive: true })
  return folder
}

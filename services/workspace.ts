import { createHash } from 'node:crypto'
import { chmodSync, lstatSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'

/** Separates the tenant from the session id in a session key (`ingress-gateway/tenancy.ts` builds the keys). */
const TENANT_SEPARATOR = '~'

/** Longest folder name {@link folderSegment} makes (file systems allow 255 bytes). */
export const MAX_FOLDER_NAME = 200

/**
 * A folder name for `text` (a tenant id, a session id): letters, digits, `_`, `-` and `.` (not first) as they are,
 * every other UTF-8 byte as `%` and two upper-case hex digits, and the empty text as `%`. Percent-encoding over a fixed
 * set is injective, and the name is never `.`, `..`, hidden, or holds `/` or NUL. A name over
 * {@link MAX_FOLDER_NAME} is cut (never inside an escape) and ends with `~` and 32 hex digits of the text's sha256:
 * `~` is always escaped in a short name, so long and short names never meet.
 */
export function folderSegment(text: string): string {
  if (text === '') return '%'
  let name = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte)
    const kept = /^[A-Za-z0-9_-]$/.test(char) || (char === '.' && name !== '')
    name += kept ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }
  if (name.length <= MAX_FOLDER_NAME) return name
  const digest = createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32)
  const head = name.slice(0, MAX_FOLDER_NAME - 33)
  const escape = head.lastIndexOf('%')
  return `${escape >= head.length - 2 && escape >= 0 ? head.slice(0, escape) : head}~${digest}`
}

/**
 * Where a session key's workspace is, relative to the root: its tenant's folder, then the session id's
 * (`<tenant>/<session id>`, each a {@link folderSegment}); a key without a tenant goes under `%` (the empty tenant's).
 * Sub-agents of a tree work in the folder of the tree's key (`<tenant>/s1%3Achild-1` for `tenant~s1:child-1`).
 */
export function workspacePath(sessionKey: string): [tenantFolder: string, sessionFolder: string] {
  const separator = sessionKey.indexOf(TENANT_SEPARATOR)
  if (separator <= 0) return ['%', folderSegment(sessionKey)]
  return [folderSegment(sessionKey.slice(0, separator)), folderSegment(sessionKey.slice(separator + 1))]
}

/**
 * The folder name of a session key before workspaces were named after the session (one flat folder per key at the
 * root): letters, digits and `-` as they are, every other UTF-8 byte (`_` included) as `_` and two hex digits. A
 * session whose folder of this name exists keeps using it; new sessions get {@link workspacePath}.
 */
export function legacyWorkspaceFolderName(sessionKey: string): string {
  let name = ''
  for (const byte of Buffer.from(sessionKey, 'utf8')) {
    const char = String.fromCharCode(byte)
    name += /^[A-Za-z0-9-]$/.test(char) ? char : `_${byte.toString(16).padStart(2, '0')}`
  }
  return name
}

/**
 * The workspace folder of a session key (created on demand): the root its file and shell tools are confined to;
 * `<root>/<tenant>/<session id>` ({@link workspacePath}), or the flat folder of a session that has one from before
 * ({@link legacyWorkspaceFolderName}: left as it is, never moved, so a run in flight on an older deployment keeps it).
 * Private to the services' user (0700, also for a workspace made before with another mode); the sandbox's umask 077
 * keeps what commands create in it private too.
 */
export async function sessionWorkspace(root: string, sessionKey: string): Promise<string> {
  // Synchronous on purpose: four quick metadata calls, run inside the run's first step, which under a burst of runs
  // waited milliseconds each behind the thread pool's other work (up to 12 ms seen at a run's start).
  const legacy = join(root, legacyWorkspaceFolderName(sessionKey))
  if (isDirectory(legacy)) {
    chmodSync(legacy, 0o700)
    return legacy
  }
  const [tenantFolder, sessionFolder] = workspacePath(sessionKey)
  mkdirSync(join(root, tenantFolder), { recursive: true, mode: 0o700 })
  const folder = join(root, tenantFolder, sessionFolder)
  mkdirSync(folder, { recursive: true, mode: 0o700 })
  chmodSync(folder, 0o700)
  return folder
}

/** Whether `path` is a directory itself (a link to one is not). */
export function isDirectory(path: string): boolean {
  try {
    return lstatSync(path).isDirectory()
  } catch {
    return false
  }
}

/**
 * The tenant whose limits the sandboxed processes of a session share: the part before `~` of its key
 * (`<tenant>~<sessionId>`, and `<tenant>~<sessionId>:<label>` for a sub-agent, so children share their parent's
 * tenant). A key without a tenant (a session started without the gateway) is a tenant of its own: its root session.
 */
export function tenantOfSessionKey(sessionKey: string): string {
  const separator = sessionKey.indexOf(TENANT_SEPARATOR)
  return separator > 0 ? sessionKey.slice(0, separator) : (sessionKey.split(':')[0] ?? sessionKey)
}

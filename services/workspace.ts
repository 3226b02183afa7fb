import { chmod, mkdir } from 'node:fs/promises'
import { join } from 'node:path'

/** Separates the tenant from the session id in a session key (`ingress-gateway/tenancy.ts` builds the keys). */
const TENANT_SEPARATOR = '~'

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

/**
 * The workspace folder of a session key (created on demand): the root its file and shell tools are confined to.
 * Private to the services' user (0700, also for a workspace made before with another mode); the sandbox's umask 077
 * keeps what commands create in it private too.
 */
export async function sessionWorkspace(root: string, sessionKey: string): Promise<string> {
  const folder = join(root, workspaceFolderName(sessionKey))
  await mkdir(folder, { recursive: true, mode: 0o700 })
  await chmod(folder, 0o700)
  return folder
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

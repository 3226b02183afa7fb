import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createPrivateTempFolder } from './private-temp-folder'
import { seccompFilterProgram } from './seccomp-filter'

const written = new Map<boolean, string>()

/**
 * The path of a file holding `seccompFilterProgram({ denyLinks })`, for the launcher to open as the fd `bwrap
 * --seccomp` reads. Written once per process and variant in a fresh private folder (never a path another user could
 * have planted), removed when the process exits; folders of processes that died without their exit handler go on the
 * next start.
 */
export function seccompFilterFile(denyLinks = false): string {
  // A temporary-file cleaner may have removed it: written again then.
  const known = written.get(denyLinks)
  if (known !== undefined && existsSync(known)) return known
  const folder = createPrivateTempFolder('zidane-seccomp-')
  const file = join(folder, 'filter.bpf')
  writeFileSync(file, seccompFilterProgram({ denyLinks }), { mode: 0o600 })
  written.set(denyLinks, file)
  return file
}

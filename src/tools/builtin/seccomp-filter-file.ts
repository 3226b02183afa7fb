import { existsSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createPrivateTempFolder } from './private-temp-folder'
import { seccompFilterProgram } from './seccomp-filter'

let written: string | undefined

/**
 * The path of a file holding `seccompFilterProgram()`, for the launcher to open as the fd `bwrap --seccomp` reads.
 * Written once per process in a fresh private folder (never a path another user could have planted), removed when the
 * process exits; folders of processes that died without their exit handler go on the next start.
 */
export function seccompFilterFile(): string {
  // A temporary-file cleaner may have removed it: written again then.
  if (written !== undefined && existsSync(written)) return written
  const folder = createPrivateTempFolder('zidane-seccomp-')
  const file = join(folder, 'filter.bpf')
  writeFileSync(file, seccompFilterProgram(), { mode: 0o600 })
  written = file
  return file
}

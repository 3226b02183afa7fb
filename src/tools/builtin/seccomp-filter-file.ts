import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isProcessAlive } from '../../durable/process-alive'
import { seccompFilterProgram } from './seccomp-filter'

const FOLDER_PREFIX = 'zidane-seccomp-'
let written: string | undefined

/**
 * The path of a file holding `seccompFilterProgram()`, for the launcher to open as the fd `bwrap --seccomp` reads.
 * Written once per process in a fresh private folder (never a path another user could have planted), removed when the
 * process exits; folders of processes that died without their exit handler go on the next start.
 */
export function seccompFilterFile(): string {
  // A temporary-file cleaner may have removed it: written again then.
  if (written !== undefined && existsSync(written)) return written
  removeFoldersOfDeadProcesses()
  const folder = mkdtempSync(join(tmpdir(), `${FOLDER_PREFIX}${process.pid}-`))
  process.once('exit', () => rmSync(folder, { recursive: true, force: true }))
  const file = join(folder, 'filter.bpf')
  writeFileSync(file, seccompFilterProgram(), { mode: 0o600 })
  written = file
  return file
}

function removeFoldersOfDeadProcesses(): void {
  for (const entry of readdirSync(tmpdir()).filter(name => name.startsWith(FOLDER_PREFIX))) {
    const pid = Number(entry.slice(FOLDER_PREFIX.length).split('-')[0])
    if (Number.isInteger(pid) && pid > 0 && !isProcessAlive(pid)) rmSync(join(tmpdir(), entry), { recursive: true, force: true })
  }
}

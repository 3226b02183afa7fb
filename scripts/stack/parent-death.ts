import { existsSync } from 'node:fs'
import { delimiter, join } from 'node:path'

/** The signal a supervised process gets when its supervisor dies: SIGTERM, so the services drain as on any stop. */
export const PARENT_DEATH_SIGNAL = 'TERM'

let setprivPath: string | null | undefined

/** util-linux's `setpriv` on `PATH` (Linux), or undefined where it is missing (macOS, a bare Alpine). */
function findSetpriv(): string | undefined {
  if (setprivPath === undefined) {
    const folders = process.platform === 'linux' ? (process.env.PATH ?? '').split(delimiter).filter(Boolean) : []
    setprivPath = folders.map(folder => join(folder, 'setpriv')).find(path => existsSync(path)) ?? null
  }
  return setprivPath ?? undefined
}

/**
 * `command args` started so that the kernel sends it SIGTERM when the process that spawned it dies, however it dies
 * (SIGKILL included): `setpriv --pdeathsig` sets Linux's parent-death signal and execs the command (same pid, so the
 * supervisor signals the program itself). Unchanged where `setpriv` is missing: there, a supervisor killed with SIGKILL
 * leaves its processes running (docs/operations.md).
 */
export function withParentDeathSignal(command: string, args: readonly string[]): { command: string; args: string[] } {
  const setpriv = findSetpriv()
  return setpriv ? { command: setpriv, args: [`--pdeathsig=${PARENT_DEATH_SIGNAL}`, '--', command, ...args] } : { command, args: [...args] }
}

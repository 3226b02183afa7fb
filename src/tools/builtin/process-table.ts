import { readdirSync, readFileSync } from 'node:fs'

let bootId: string | undefined

/**
 * The identity of a live process: the boot id and the start time (clock ticks since boot) from `/proc/<pid>/stat`,
 * so a pid the kernel handed to another process never matches. Undefined when the process is gone, is a zombie, or
 * there is no `/proc` (not Linux).
 */
export function processFingerprint(pid: number): string | undefined {
  const fields = statFields(pid)
  if (!fields || fields[0] === 'Z') return undefined
  bootId ??= readText('/proc/sys/kernel/random/boot_id')?.trim() ?? 'unknown-boot'
  // Field 22 of stat (starttime) is the 20th after the command name.
  return `${bootId}/${fields[19] ?? ''}`
}

/** A process as `listProcesses` reads it from `/proc`. */
export interface ProcessEntry {
  pid: number
  /** Its process group. */
  group: number
  /** The value of the variable asked for, when its environment sets it. */
  value: string | undefined
  /** False when the environment could not be read or was empty (not ours, or a process in the middle of `exec`). */
  environmentRead: boolean
}

/** Every other live process, with its group and the value of `variable` in its environment: one pass over `/proc`. */
export function listProcesses(variable: string): ProcessEntry[] {
  const prefix = `${variable}=`
  const found: ProcessEntry[] = []
  for (const entry of listProc()) {
    const pid = Number(entry)
    if (!Number.isInteger(pid) || pid === process.pid) continue
    const fields = statFields(pid)
    if (!fields || fields[0] === 'Z') continue
    const environment = readText(`/proc/${pid}/environ`) ?? ''
    const value = environment.split('\0').find(line => line.startsWith(prefix))?.slice(prefix.length)
    found.push({ pid, group: Number(fields[2]), value, environmentRead: environment !== '' })
  }
  return found
}

/** The fields of `/proc/<pid>/stat` after the command name (state first), or undefined when it cannot be read. */
function statFields(pid: number): string[] | undefined {
  const stat = readText(`/proc/${pid}/stat`)
  return stat === undefined ? undefined : stat.slice(stat.lastIndexOf(')') + 2).split(' ')
}

function listProc(): string[] {
  try {
    return readdirSync('/proc')
  } catch {
    return []
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    // Gone, not ours (EACCES) or no /proc: nothing to read.
    return undefined
  }
}

import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { listProcesses, processFingerprint } from './process-table'

/** Set in the environment of every command (so inherited by what it starts): the command's id, to find its processes later. */
export const COMMAND_ID_VARIABLE = 'ZIDANE_COMMAND_ID'

/** One registry file: the process that ran the command and, once started, the command's process group. */
export interface CommandRecord {
  id: string
  owner: { pid: number; fingerprint: string }
  group?: { pgid: number; fingerprint: string }
}

/**
 * Records the commands this process runs, one small file each in a folder on this host, so that a later process can
 * stop what a killed one left behind (`stopOrphanedCommands`). Writes are best-effort: a failing disk never fails a
 * command. Without `/proc` (not Linux) it records nothing.
 */
export interface CommandRegistry {
  /** Records command `id` before it starts, so a kill right after the start still leaves a trace. */
  add(id: string): void
  /** Adds the process group `pgid` (led by the command's shell) to the record of `id`. */
  started(id: string, pgid: number): void
  /** Forgets `id`: none of its processes runs any more. */
  remove(id: string): void
}

/** A registry writing to `folder` (created if missing). */
export function createCommandRegistry(folder: string): CommandRegistry {
  const fingerprint = processFingerprint(process.pid)
  if (fingerprint === undefined) return { add: () => undefined, started: () => undefined, remove: () => undefined }
  const owner = { pid: process.pid, fingerprint }
  bestEffort(() => mkdirSync(folder, { recursive: true }))
  const file = (id: string): string => join(folder, `${id}.json`)
  const write = (record: CommandRecord): void => bestEffort(() => {
    // Written aside then renamed: a reader never sees half a record.
    writeFileSync(`${file(record.id)}.tmp`, JSON.stringify(record))
    renameSync(`${file(record.id)}.tmp`, file(record.id))
  })
  return {
    add: id => write({ id, owner }),
    started: (id, pgid) => {
      const leader = processFingerprint(pgid)
      if (leader !== undefined) write({ id, owner, group: { pgid, fingerprint: leader } })
    },
    remove: id => bestEffort(() => rmSync(file(id), { force: true })),
  }
}

/**
 * Stops the commands recorded in `folder` by processes that no longer run (a SIGKILL, a crash), and deletes those
 * records. Call it at start-up, before taking work. A group is killed only while its leader is still the recorded
 * process (same fingerprint); besides, every process that still carries a stale command's id is killed (background
 * jobs whose shell has exited). Records of live processes (another replica on this host) are left alone.
 * Returns how many commands it stopped.
 */
export function stopOrphanedCommands(folder: string): number {
  const orphans = readRecords(folder).filter(record => processFingerprint(record.owner.pid) !== record.owner.fingerprint)
  if (orphans.length === 0) return 0
  const commands = orphans.map(({ id, group }) => {
    const leader = group ? processFingerprint(group.pgid) : undefined
    if (group && leader === group.fingerprint) signal(-group.pgid, 'SIGKILL')
    // A group whose pid now leads another process was reused: none of its processes is ours.
    return { id, group: group && (leader === undefined || leader === group.fingerprint) ? group.pgid : undefined }
  })
  killCommandProcesses(commands, 'SIGKILL')
  for (const record of orphans) bestEffort(() => rmSync(join(folder, `${record.id}.json`), { force: true }))
  return orphans.length
}

/**
 * Signals every live process that carries the id of one of `commands` in its environment. A process whose environment
 * reads empty (caught in the middle of `exec`) is signalled when it sits in the command's `group`: pass a group only
 * while it cannot have been reused (its leader is the recorded process, or no process has its pid).
 */
export function killCommandProcesses(commands: ReadonlyArray<{ id: string; group: number | undefined }>, killSignal: NodeJS.Signals): void {
  if (commands.length === 0) return
  const ids = new Set(commands.map(command => command.id))
  const groups = new Set(commands.flatMap(command => (command.group === undefined ? [] : [command.group])))
  for (const entry of listProcesses(COMMAND_ID_VARIABLE)) {
    const ours = entry.value !== undefined ? ids.has(entry.value) : !entry.environmentRead && groups.has(entry.group)
    if (ours) signal(entry.pid, killSignal)
  }
}

function readRecords(folder: string): CommandRecord[] {
  let names: string[]
  try {
    names = readdirSync(folder).filter(name => name.endsWith('.json'))
  } catch {
    return []
  }
  return names.flatMap(name => {
    try {
      return [JSON.parse(readFileSync(join(folder, name), 'utf8')) as CommandRecord]
    } catch {
      return []
    }
  })
}

function signal(pid: number, killSignal: NodeJS.Signals): void {
  try {
    process.kill(pid, killSignal)
  } catch {
    // ESRCH: gone already.
  }
}

let warned = false

function bestEffort(write: () => void): void {
  try {
    write()
  } catch (error) {
    if (!warned) console.warn(`zidane: cannot record running commands (${(error as Error).message}); commands left by a killed process will not be stopped`)
    warned = true
  }
}

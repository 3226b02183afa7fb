import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** A cgroup created for one command: its folder, and `release()` to remove it once the command's processes are gone. */
export interface PidsCgroup {
  readonly path: string
  release(): void
}

const PREFIX = 'zidane-command-'
/** A leftover cgroup younger than this may belong to a command another process is starting right now. */
const SWEEP_AFTER_MS = 60_000
const RELEASE_RETRIES = 50
const RELEASE_RETRY_MS = 100

/**
 * The folder under which this process can create cgroups with a `pids` controller and move processes into them, or
 * undefined: the `pids` hierarchy of cgroup v1, or the cgroup v2 root with `pids` enabled for its children (enabled
 * here when the root allows it). Needs write access to the cgroup file system (root on the host; most containers mount
 * it read-only). Tried once, with a throwaway cgroup and `sh`.
 */
export function findPidsCgroupRoot(mounts: readonly Mount[] = readMounts()): string | undefined {
  for (const { type, folder, options } of mounts) {
    const usable = (type === 'cgroup' && options.split(',').includes('pids')) || (type === 'cgroup2' && enablePidsController(folder))
    if (usable && canMoveProcessesInto(folder)) return folder
  }
  return undefined
}

function canMoveProcessesInto(root: string): boolean {
  const cgroup = createPidsCgroup(root, 8)
  if (cgroup === undefined) return false
  const joined = spawnSync('sh', ['-c', 'echo $$ > "$0/cgroup.procs"', cgroup.path], { stdio: 'ignore', timeout: 5000 })
  cgroup.release()
  return joined.status === 0
}

/** One line of /proc/self/mounts: the file system type, where it is mounted, its options. */
export interface Mount {
  type: string
  folder: string
  options: string
}

function readMounts(): Mount[] {
  try {
    return readFileSync('/proc/self/mounts', 'utf8').split('\n').map(line => line.split(' ')).map(([, folder = '', type = '', options = '']) => ({ type, folder, options }))
  } catch {
    return []
  }
}

function enablePidsController(folder: string): boolean {
  try {
    if (!readFileSync(join(folder, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('pids')) return false
    if (!readFileSync(join(folder, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('pids')) writeFileSync(join(folder, 'cgroup.subtree_control'), '+pids')
    return true
  } catch {
    return false
  }
}

/**
 * Creates a cgroup below `root` whose processes together may never number more than `maxProcesses` (`pids.max`: a
 * fork past it fails with EAGAIN, for root too, unlike `RLIMIT_NPROC`). Undefined when it cannot be created. Removes
 * the empty cgroups that crashed processes left behind.
 */
export function createPidsCgroup(root: string, maxProcesses: number): PidsCgroup | undefined {
  sweepLeftovers(root)
  const path = join(root, `${PREFIX}${randomUUID()}`)
  try {
    mkdirSync(path)
    writeFileSync(join(path, 'pids.max'), String(maxProcesses))
  } catch {
    removeCgroup(path)
    return undefined
  }
  return { path, release: () => releaseWhenEmpty(path, RELEASE_RETRIES) }
}

/** The killed processes of a command may take a moment to be reaped: retry until the cgroup can be removed. */
function releaseWhenEmpty(path: string, retries: number): void {
  if (removeCgroup(path) || retries <= 0) return
  setTimeout(() => releaseWhenEmpty(path, retries - 1), RELEASE_RETRY_MS).unref()
}

function removeCgroup(path: string): boolean {
  try {
    rmdirSync(path)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
  }
}

function sweepLeftovers(root: string): void {
  let entries: string[]
  try {
    entries = readdirSync(root).filter(entry => entry.startsWith(PREFIX))
  } catch {
    return
  }
  // A cgroup with processes refuses rmdir, so only empty ones go.
  for (const entry of entries) if (isOlderThan(join(root, entry), SWEEP_AFTER_MS)) removeCgroup(join(root, entry))
}

function isOlderThan(path: string, ageMs: number): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > ageMs
  } catch {
    return false
  }
}

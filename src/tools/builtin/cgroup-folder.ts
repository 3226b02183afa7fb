import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { CgroupController, CgroupRoot } from './cgroup-roots'

/** The limits of one cgroup; an unset one is lifted (`max`). */
export interface CgroupLimits {
  /** Memory of all its processes together, their tmpfs pages included (the kernel charges them to the writer). */
  memoryBytes?: number
  /** Processes and threads of all its processes together (`pids.max`: a fork past it fails with EAGAIN, for root too). */
  maxProcesses?: number
  /** CPU time per wall time, in percent of one CPU (150: one and a half CPUs). */
  cpuPercent?: number
}

const CPU_PERIOD_US = 100_000
const RELEASE_RETRIES = 50
const RELEASE_RETRY_MS = 100

/** Creates the cgroup at `path` unless it exists; false when it cannot (its parent is gone, no permission). */
export function makeCgroup(path: string): boolean {
  try {
    mkdirSync(path)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EEXIST'
  }
}

/** Removes the cgroup at `path`; true when it is gone. A cgroup with processes or children stays. */
export function removeCgroup(path: string): boolean {
  try {
    rmdirSync(path)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT'
  }
}

/** Removes the cgroup at `path` once empty: the killed processes of a command may take a moment to be reaped. */
export function releaseWhenEmpty(path: string, then: () => void = () => undefined, retries = RELEASE_RETRIES): void {
  if (removeCgroup(path) || retries <= 0) return then()
  setTimeout(() => releaseWhenEmpty(path, then, retries - 1), RELEASE_RETRY_MS).unref()
}

/** Sets `limits` on the cgroup at `folder` for the controllers of `root`; false when a limit could not be set. */
export function writeLimits(root: CgroupRoot, folder: string, limits: CgroupLimits): boolean {
  return root.controllers.every(controller => writeLimit(root.version, controller, folder, limits))
}

function writeLimit(version: 1 | 2, controller: CgroupController, folder: string, limits: CgroupLimits): boolean {
  if (controller === 'pids') return write(join(folder, 'pids.max'), limits.maxProcesses ?? 'max')
  if (controller === 'memory') return version === 2 ? writeMemoryV2(folder, limits) : writeMemoryV1(folder, limits)
  // cgroup v1 refuses a quota above an ancestor's (a container's CPU limit): that one binds then, which is stricter.
  if (version === 2) write(join(folder, 'cpu.max'), `${cpuQuotaUs(limits)} ${CPU_PERIOD_US}`)
  else writeCpuV1(folder, limits)
  return true
}

function cpuQuotaUs(limits: CgroupLimits): number | 'max' {
  return limits.cpuPercent === undefined ? 'max' : Math.max(1000, Math.round((limits.cpuPercent / 100) * CPU_PERIOD_US))
}

function writeCpuV1(folder: string, limits: CgroupLimits): boolean {
  const quota = cpuQuotaUs(limits)
  return write(join(folder, 'cpu.cfs_period_us'), CPU_PERIOD_US) && write(join(folder, 'cpu.cfs_quota_us'), quota === 'max' ? -1 : quota)
}

/** Swap is capped too (`memsw`, when the kernel accounts it), so tmpfs pages cannot escape the limit to swap. */
function writeMemoryV1(folder: string, limits: CgroupLimits): boolean {
  const value = limits.memoryBytes ?? -1
  const memory = join(folder, 'memory.limit_in_bytes')
  const withSwap = join(folder, 'memory.memsw.limit_in_bytes')
  if (!existsSync(withSwap)) return write(memory, value)
  // memory ≤ memsw at every moment: raising a limit goes through memsw first, lowering through memory first.
  if (write(memory, value)) return write(withSwap, value)
  return write(withSwap, value) && write(memory, value)
}

function writeMemoryV2(folder: string, limits: CgroupLimits): boolean {
  const set = write(join(folder, 'memory.max'), limits.memoryBytes ?? 'max')
  if (existsSync(join(folder, 'memory.swap.max'))) write(join(folder, 'memory.swap.max'), limits.memoryBytes === undefined ? 'max' : 0)
  return set
}

function write(path: string, value: number | string): boolean {
  try {
    writeFileSync(path, String(value))
    return true
  } catch {
    return false
  }
}

/**
 * cgroup v2: gives the children of `folder` the `wanted` controllers it has (`cgroup.subtree_control`); returns those
 * its children get. None when it cannot (no write access; a non-root cgroup with processes of its own).
 */
export function enableControllers(folder: string, wanted: readonly CgroupController[]): CgroupController[] {
  try {
    const available = readFileSync(join(folder, 'cgroup.controllers'), 'utf8').split(/\s+/)
    const enabled = readFileSync(join(folder, 'cgroup.subtree_control'), 'utf8').split(/\s+/)
    const missing = wanted.filter(controller => available.includes(controller) && !enabled.includes(controller))
    if (missing.length > 0) writeFileSync(join(folder, 'cgroup.subtree_control'), missing.map(controller => `+${controller}`).join(' '))
    return wanted.filter(controller => available.includes(controller))
  } catch {
    return []
  }
}

/** The child cgroups of `folder` named `prefix…`; none when it cannot be read. */
export function childCgroups(folder: string, prefix: string): string[] {
  try {
    return readdirSync(folder).filter(entry => entry.startsWith(prefix)).map(entry => join(folder, entry))
  } catch {
    return []
  }
}

/** Whether the folder at `path` was last changed more than `ageMs` ago (false when it is gone). */
export function isOlderThan(path: string, ageMs: number): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > ageMs
  } catch {
    return false
  }
}

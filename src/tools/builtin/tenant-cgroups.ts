import { createHash, randomUUID } from 'node:crypto'
import { join } from 'node:path'
import { childCgroups, enableControllers, isOlderThan, makeCgroup, releaseWhenEmpty, removeCgroup, writeLimits } from './cgroup-folder'
import type { CgroupLimits } from './cgroup-folder'
import type { CgroupRoot } from './cgroup-roots'

/** The limits of the three levels: every sandboxed command of this host together, one tenant's, one command's. */
export interface SandboxCgroupLimits {
  allTenants: CgroupLimits
  tenant: CgroupLimits
  command: CgroupLimits
}

/** The cgroups one command runs in (one per root: its processes join every folder), and `release()` once it ended. */
export interface CommandCgroup {
  readonly folders: readonly string[]
  release(): void
}

/** Below each root: `zidane-sandbox/tenant-<digest>/command-<uuid>` (the top's name can be set: `cgroupName`). */
const TOP = 'zidane-sandbox'
const TENANT_PREFIX = 'tenant-'
const COMMAND_PREFIX = 'command-'
/** Leftovers of older versions and of the probe, directly below a root. */
const LOOSE_PREFIXES = ['zidane-command-', 'zidane-probe-']
/** A leftover younger than this may belong to a command another process is starting right now. */
const SWEEP_AFTER_MS = 60_000
/** Another process may remove an empty tenant cgroup between our mkdirs: the chain is made again. */
const ATTEMPTS = 3
const lastSweepAt = new Map<string, number>()
const EXIT_RETRIES = 20
const EXIT_RETRY_MS = 25
/** Command cgroups released but not removed yet: tried once more when this process exits (its retry timers never fire then). */
const pending = new Set<string>()
let exitHookInstalled = false

/**
 * Creates the cgroups of one command of `tenant` (undefined: a tenant of its own, removed with the command) below
 * every root, each level with its limits (written again each time, so changed settings apply). Undefined when they
 * cannot be made. Empty cgroups that crashed processes left behind are removed along the way.
 */
export function createCommandCgroup(roots: readonly CgroupRoot[], tenant: string | undefined, limits: SandboxCgroupLimits, top = TOP): CommandCgroup | undefined {
  for (const root of roots) sweepLeftovers(root.folder, top)
  const names = { tenant: tenant === undefined ? `${TENANT_PREFIX}own-${randomUUID()}` : `${TENANT_PREFIX}${digest(tenant)}`, command: `${COMMAND_PREFIX}${randomUUID()}` }
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const folders = roots.map(root => makeChain(root, top, names, limits))
    const made = folders.filter((folder): folder is string => folder !== undefined)
    if (made.length === roots.length) return { folders: made, release: () => { for (const folder of made) releaseChain(folder) } }
    for (const folder of made) releaseChain(folder)
  }
  return undefined
}

function digest(tenant: string): string {
  return createHash('sha256').update(tenant).digest('hex').slice(0, 16)
}

function makeChain(root: CgroupRoot, topName: string, names: { tenant: string; command: string }, limits: SandboxCgroupLimits): string | undefined {
  const top = join(root.folder, topName)
  const tenant = join(top, names.tenant)
  const command = join(tenant, names.command)
  if (!makeLevel(root, top, limits.allTenants) || !makeLevel(root, tenant, limits.tenant)) return undefined
  if (!makeCgroup(command)) return undefined
  return writeLimits(root, command, limits.command) ? command : (removeCgroup(command), undefined)
}

/** A level with children: on cgroup v2 it must hand them its controllers. */
function makeLevel(root: CgroupRoot, folder: string, limits: CgroupLimits): boolean {
  if (!makeCgroup(folder) || !writeLimits(root, folder, limits)) return false
  return root.version === 1 || enableControllers(folder, root.controllers).length === root.controllers.length
}

/** Removes the command's cgroup once its processes are gone, then its tenant's and the top one when they are empty. */
function releaseChain(command: string): void {
  pending.add(command)
  installExitHook()
  releaseWhenEmpty(command, () => removeChain(command))
}

function removeChain(command: string): void {
  pending.delete(command)
  const tenant = join(command, '..')
  if (removeCgroup(command) && removeCgroup(tenant)) removeCgroup(join(tenant, '..'))
}

/** Processes killed just before the exit (`stopRunningCommands`) take a moment to be reaped: waits up to half a second for them. */
function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once('exit', () => {
    const pause = new Int32Array(new SharedArrayBuffer(4))
    for (let tries = 0; tries < EXIT_RETRIES && pending.size > 0; tries++) {
      for (const command of [...pending]) if (removeCgroup(command)) removeChain(command)
      if (pending.size > 0) Atomics.wait(pause, 0, 0, EXIT_RETRY_MS)
    }
  })
}

/** At most once a minute per root: command cgroups left by crashed processes (a cgroup with processes refuses rmdir). */
function sweepLeftovers(rootFolder: string, top: string): void {
  const now = Date.now()
  const key = join(rootFolder, top)
  if (now - (lastSweepAt.get(key) ?? 0) < SWEEP_AFTER_MS) return
  lastSweepAt.set(key, now)
  const loose = LOOSE_PREFIXES.flatMap(prefix => childCgroups(rootFolder, prefix))
  for (const folder of loose) if (isOlderThan(folder, SWEEP_AFTER_MS)) removeCgroup(folder)
  for (const tenant of childCgroups(key, TENANT_PREFIX)) {
    for (const command of childCgroups(tenant, COMMAND_PREFIX)) if (isOlderThan(command, SWEEP_AFTER_MS)) removeCgroup(command)
    removeCgroup(tenant)
  }
  removeCgroup(key)
}

import { spawnSync } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { enableControllers, makeCgroup, releaseWhenEmpty } from './cgroup-folder'

/** The cgroup controllers the sandbox limits commands with. */
export type CgroupController = 'memory' | 'pids' | 'cpu'

const WANTED: readonly CgroupController[] = ['memory', 'pids', 'cpu']

/**
 * A folder in which this process can create cgroups and move processes into them, with the controllers those cgroups
 * get: a cgroup v1 hierarchy (one or more controllers each), or the cgroup v2 root (all of them).
 */
export interface CgroupRoot {
  readonly folder: string
  readonly version: 1 | 2
  readonly controllers: readonly CgroupController[]
}

/** What the search reads, so tests can hand in another machine's: `/proc/self/mountinfo` and `/proc/self/cgroup`. */
export interface CgroupSources {
  mountinfo: string
  ownCgroups: string
}

/**
 * The cgroup roots this process can use for the sandbox's limits, at most one per controller; empty when the cgroup
 * file system is not writable (most containers) or has none of the controllers. A v1 root is this process's own
 * cgroup in that hierarchy, so the limits nest under whatever the operator set for the services; the v2 root is the
 * mount's root (a cgroup with processes cannot give its children controllers). Each is tried once with `sh`.
 */
export function findCgroupRoots(sources: CgroupSources = readSources()): CgroupRoot[] {
  const roots: CgroupRoot[] = []
  const taken = new Set<CgroupController>()
  for (const candidate of candidates(sources)) {
    const controllers = candidate.controllers.filter(controller => !taken.has(controller))
    if (controllers.length === 0 || !canMoveProcessesInto(candidate.folder)) continue
    roots.push({ ...candidate, controllers })
    for (const controller of controllers) taken.add(controller)
  }
  return roots
}

function readSources(): CgroupSources {
  const read = (path: string): string => {
    try {
      return readFileSync(path, 'utf8')
    } catch {
      return ''
    }
  }
  return { mountinfo: read('/proc/self/mountinfo'), ownCgroups: read('/proc/self/cgroup') }
}

/** v1 hierarchies first: on a hybrid host the controllers bound to v1 are not available in v2. */
function candidates(sources: CgroupSources): CgroupRoot[] {
  const mounts = parseMountinfo(sources.mountinfo)
  const v1 = mounts.filter(mount => mount.type === 'cgroup').flatMap(mount => {
    const controllers = WANTED.filter(controller => mount.superOptions.includes(controller))
    return controllers.length === 0 ? [] : [{ folder: ownFolder(mount, ownPath(sources.ownCgroups, controllers[0] as CgroupController)), version: 1 as const, controllers }]
  })
  const v2 = mounts.filter(mount => mount.type === 'cgroup2').flatMap(mount => {
    const controllers = enableControllers(mount.point, WANTED)
    return controllers.length === 0 ? [] : [{ folder: mount.point, version: 2 as const, controllers }]
  })
  return [...v1, ...v2]
}

interface CgroupMount {
  type: string
  point: string
  /** The folder of the hierarchy this mount shows (a container often sees only its own part). */
  root: string
  superOptions: string[]
}

function parseMountinfo(text: string): CgroupMount[] {
  return text.split('\n').flatMap(line => {
    const [left = '', right = ''] = line.split(' - ')
    const fields = left.split(' ')
    const [type = '', , superOptions = ''] = right.split(' ')
    return type.startsWith('cgroup') ? [{ type, point: fields[4] ?? '', root: fields[3] ?? '/', superOptions: superOptions.split(',') }] : []
  })
}

/** This process's cgroup in the v1 hierarchy of `controller`, from a `/proc/self/cgroup` line `N:memory:/path`. */
function ownPath(ownCgroups: string, controller: CgroupController): string {
  for (const line of ownCgroups.split('\n')) {
    const [, controllers = '', path = '/'] = line.split(':')
    if (controllers.split(',').includes(controller)) return path
  }
  return '/'
}

function ownFolder(mount: CgroupMount, path: string): string {
  const inside = relative(mount.root, path)
  const folder = inside.startsWith('..') ? mount.point : join(mount.point, inside)
  return existsSync(folder) ? folder : mount.point
}

function canMoveProcessesInto(root: string): boolean {
  const probe = join(root, `zidane-probe-${randomUUID()}`)
  if (!makeCgroup(probe)) return false
  const joined = spawnSync('sh', ['-c', 'echo $$ > "$0/cgroup.procs"', probe], { stdio: 'ignore', timeout: 5000 })
  releaseWhenEmpty(probe)
  return joined.status === 0
}

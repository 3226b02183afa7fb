import { execFileSync } from 'node:child_process'
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { findCgroupRoots } from '../../src/tools/builtin/cgroup-roots'
import { PARENT_DEATH_SIGNAL } from './parent-death'

/** The unprivileged account the services process runs as. */
export interface ServicesUser {
  readonly name: string
  readonly uid: number
  readonly gid: number
}

/** The cgroup folder (below the stack's own, in each hierarchy) handed to the services user for the sandbox's cgroups. */
const DELEGATED_CGROUP = 'zidane-services'

/** Who the services run as: an unprivileged account, or the stack's own user with the reason (undefined when not root). */
export type ServicesUserChoice = { user: ServicesUser } | { user: undefined; keepsRootBecause?: string }

/**
 * Who the services run as: when the stack runs as root, the account `ZIDANE_SERVICES_USER` names (default `nobody`);
 * the stack's own user when the stack is not root, when the setting is `root`, or, unless the setting is explicit,
 * when the host's cgroups cannot be delegated to another user (cgroup v2, read-only cgroups: the tenants' limits need
 * the cgroups more than the services need to drop root) or when other accounts cannot reach the checkout's code.
 */
export function servicesUser(env: NodeJS.ProcessEnv): ServicesUserChoice {
  if (process.getuid?.() !== 0) return { user: undefined }
  const name = env.ZIDANE_SERVICES_USER || 'nobody'
  if (name === 'root') return { user: undefined, keepsRootBecause: 'ZIDANE_SERVICES_USER=root' }
  if (env.ZIDANE_SERVICES_USER === undefined && !canDelegateCgroups()) return { user: undefined, keepsRootBecause: "this host's cgroups cannot be handed to another account" }
  const checkout = resolve(import.meta.dirname, '..', '..')
  if (env.ZIDANE_SERVICES_USER === undefined && !reachableByOthers(checkout)) return { user: undefined, keepsRootBecause: `other accounts cannot reach ${checkout} (a folder on its path lacks o+x)` }
  return { user: { name, uid: idOf(name, '-u'), gid: idOf(name, '-g') } }
}

/**
 * Whether every folder from the root down to `folder` lets other accounts pass (`o+x`): a checkout in a private folder
 * (`mktemp -d` makes them 0700) cannot be read by `nobody`, whose services would fail to load their own code.
 */
export function reachableByOthers(folder: string): boolean {
  for (let current = resolve(folder); ; current = dirname(current)) {
    if ((statSync(current).mode & 0o001) === 0) return false
    if (dirname(current) === current) return true
  }
}

function idOf(name: string, flag: '-u' | '-g'): number {
  const id = Number(execFileSync('id', [flag, name], { encoding: 'utf8' }).trim())
  if (!Number.isInteger(id)) throw new Error(`ZIDANE_SERVICES_USER: no account named ${name}`)
  return id
}

/** cgroup v1 hierarchies can be delegated with a chown; cgroup v2 asks for a layout the sandbox does not use yet. */
function canDelegateCgroups(): boolean {
  const roots = findCgroupRoots()
  return roots.length > 0 && roots.every(root => root.version === 1)
}

/**
 * Gives `user` what the services write: `folders` (the workspace root and a home; made theirs, links and hard-linked
 * files not followed), a way through the data folder to them (0711: no listing; its other folders become 0700 and its
 * secrets stay 0600), and a cgroup of its own in each hierarchy the
 * sandbox uses, where the services make the tenants' cgroups. Returns the `cgroup.procs` files the services process
 * must join before it drops root.
 */
export function prepareForServicesUser(user: ServicesUser, dataDir: string, folders: readonly string[]): string[] {
  chmodSync(dataDir, 0o711)
  closeOtherFolders(dataDir, folders)
  for (const folder of folders) {
    mkdirSync(folder, { recursive: true, mode: 0o700 })
    // A file with a second name (a hard link a tenant made to a file elsewhere) is not made the user's.
    execFileSync('find', [folder, '-xdev', '(', '-type', 'd', '-o', '-links', '1', ')', '!', '-user', String(user.uid), '-exec', 'chown', '-h', `${user.uid}:${user.gid}`, '{}', '+'])
  }
  return findCgroupRoots().map(root => delegateCgroup(root.folder, user))
}

/**
 * With the data folder passable (0711), the folders beside the handed-out ones become 0700: Restate's own (its journals
 * and state, written with umask 022) must not be readable by every local account that knows their names. A folder
 * someone deliberately shared with everyone (world-writable) is left as it is.
 */
function closeOtherFolders(dataDir: string, handedOut: readonly string[]): void {
  for (const entry of readdirSync(dataDir, { withFileTypes: true })) {
    const path = join(dataDir, entry.name)
    if (!entry.isDirectory() || handedOut.includes(path)) continue
    if ((statSync(path).mode & 0o002) === 0) chmodSync(path, 0o700)
  }
}

function delegateCgroup(parent: string, user: ServicesUser): string {
  const folder = join(parent, DELEGATED_CGROUP)
  if (!existsSync(folder)) mkdirSync(folder)
  for (const entry of ['', 'cgroup.procs', 'tasks']) {
    const path = join(folder, entry)
    if (existsSync(path)) chownSync(path, user.uid, user.gid)
  }
  return join(folder, 'cgroup.procs')
}

/**
 * The command that starts `command args` as `user`: a root shell moves itself into the delegated cgroups, then
 * `setpriv` drops to the user (every capability and supplementary group dropped), sets the parent-death signal, and
 * execs the program, keeping the process id the supervisor signals.
 */
export function asServicesUser(user: ServicesUser, cgroupProcs: readonly string[], command: string, args: readonly string[]): { command: string; args: string[] } {
  const joins = cgroupProcs.map((_file, index) => `echo $$ > "$${index + 1}"`).join(' && ')
  // A change of user clears the parent-death signal, so this setpriv sets it again after it (it sets it last).
  const drop = `exec setpriv --reuid=${user.uid} --regid=${user.gid} --clear-groups --inh-caps=-all --pdeathsig=${PARENT_DEATH_SIGNAL} -- "$@"`
  const script = `${joins === '' ? '' : `${joins} && `}shift ${cgroupProcs.length} && ${drop}`
  return { command: 'sh', args: ['-c', script, 'sh', ...cgroupProcs, command, ...args] }
}

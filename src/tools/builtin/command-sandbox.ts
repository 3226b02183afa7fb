import { spawnSync } from 'node:child_process'
import { lstatSync, readlinkSync } from 'node:fs'
import { findCgroupRoots } from './cgroup-roots'
import type { CgroupRoot } from './cgroup-roots'
import type { EgressProxyOptions } from './egress-proxy'
import { sandboxEgress } from './sandbox-egress'
import { cgroupLimitsOf, describeSandboxLimits, resolveSandboxLimits, ulimitLine } from './sandbox-limits'
import type { ResolvedSandboxLimits, SandboxLimits } from './sandbox-limits'
import { seccompFilterFile } from './seccomp-filter-file'
import { createCommandCgroup } from './tenant-cgroups'

export type { SandboxLimits } from './sandbox-limits'

/** What to spawn for one confined command, and what to call once it has ended. */
export interface WrappedCommand {
  file: string
  args: string[]
  /** Frees what the sandbox set up for this command (its cgroup); called once, after the command's process exited. */
  release?: () => void
}

/** Who a confined command runs for and what else of the host it may see. */
export interface WrapOptions {
  /** The tenant the command works for: its commands share the tenant's limits. Default: a tenant of its own. */
  tenant?: string
  /** Host files or folders the command may read (bound read-only at the same path): the file worker's runtime. */
  readOnlyPaths?: readonly string[]
  /**
   * Refuses the command every call that makes a link or a new name for a file (`LINK_SYSCALLS`), so a command bound
   * to a folder above its workspace (the file worker of a tenant's folder) cannot plant one in place of a workspace.
   */
  denyLinks?: boolean
}

/** Wraps a command line so it runs confined: `file` and `args` are what to spawn instead of `bash -c command`. */
export interface CommandSandbox {
  /** Human-readable name of the mechanism, for logs (`bubblewrap`). */
  readonly name: string
  /** What it enforces beyond confinement, for logs and status (`process cap 1024 (cgroup pids.max); per tenant …`). */
  readonly details?: string
  /**
   * The disk a workspace may use, in bytes: commands get it as their largest file (`ulimit -f`); the shell tool stops a
   * command that takes the workspace past it, and the file tools check it before writing (`assertUnderQuota`).
   */
  readonly workspaceQuotaBytes?: number
  /** The program and arguments that run `bash -c command` confined to `workspace` (read-write, also the working folder). */
  wrap(command: string, workspace: string, options?: WrapOptions): WrappedCommand
  /** Whether `WrapOptions.denyLinks` is enforced (the seccomp filter is on): a folder above a workspace may be bound only then. */
  readonly deniesLinks?: boolean
}

/** Options of `bubblewrapSandbox`. */
export interface BubblewrapOptions extends SandboxLimits {
  /** Path of the `bwrap` binary. Default `bwrap` (found on PATH). */
  bwrapPath?: string
  /** Where the per-tenant and per-command cgroups go; `false`: none (ulimit only). Default: `findCgroupRoots()`. */
  cgroupRoots?: readonly CgroupRoot[] | false
  /**
   * Name of the cgroup that holds every tenant's below each root (`ZIDANE_SANDBOX_CGROUP`). Stacks on one host that
   * must not share tenants' cgroups (and their limits) take different names. Default `zidane-sandbox`.
   */
  cgroupName?: string
  /** Whether commands run under the seccomp filter (`seccompFilterProgram`). Default true. */
  seccomp?: boolean
  /**
   * Hosts commands may reach over HTTP(S) through our filtering proxy (`example.com`, `*.example.com`); needs `socat`.
   * Default: none, and no network at all.
   */
  allowDomains?: readonly string[]
  /** How the proxy resolves allowed hosts. Default: the system resolver. */
  resolveHost?: EgressProxyOptions['resolveHost']
}

/** System folders bound read-only: programs and their libraries, nothing else of the host (not /opt, /home, /srv). */
const SYSTEM_FOLDERS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']
/** The few files of /etc programs need; never all of /etc (shadow, ssh host keys). */
const ETC_FILES = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/passwd', '/etc/group', '/etc/nsswitch.conf', '/etc/localtime', '/etc/ssl/certs', '/etc/ca-certificates', '/etc/bash.bashrc', '/etc/profile', '/etc/inputrc', '/etc/mime.types']
/** PATH inside the sandbox, whatever the caller's: the system folders only. */
export const SANDBOX_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
const MIB = 1024 * 1024
/** The fd on which the launcher hands `bwrap` the seccomp filter. */
const SECCOMP_FD = '3'

/**
 * A sandbox on bubblewrap: new user, pid, network, ipc, uts and cgroup namespaces (`--unshare-all`: no network at all,
 * so no host loopback service either), every capability dropped, a seccomp filter, system folders read-only, a
 * read-only root, private sized /tmp and /dev/shm, a private /proc and /dev, the workspace read-write and nothing
 * else of the host's files; PATH fixed, umask 077. With writable cgroups every command runs in a cgroup of its own
 * inside its tenant's (`SandboxLimits`). `--die-with-parent` plus the pid namespace make every process of the command
 * die with the `bwrap` process, which leads the process group the caller kills.
 */
export function bubblewrapSandbox(options: BubblewrapOptions = {}): CommandSandbox {
  const file = options.bwrapPath ?? 'bwrap'
  const limits = resolveSandboxLimits(options)
  const egress = (options.allowDomains ?? []).length > 0 ? sandboxEgress(egressOptions(options)) : undefined
  const setup = [ulimitLine(limits), 'umask 077', egress?.bridgeScript, 'exec bash -c "$0"'].filter(line => line !== undefined).join('\n')
  const roots = options.cgroupRoots === false ? [] : (options.cgroupRoots ?? findCgroupRoots())
  const seccomp = options.seccomp ?? true
  const sized = supportsTmpfsSize(file)
  return {
    name: 'bubblewrap',
    details: describeSandboxLimits(limits, roots, { seccomp, sizedTmpfs: sized }),
    workspaceQuotaBytes: limits.workspaceQuotaMb * MIB,
    deniesLinks: seccomp,
    wrap: (command, workspace, wrapOptions = {}) => {
      const readOnly = (wrapOptions.readOnlyPaths ?? []).flatMap(path => ['--ro-bind', path, path])
      const confinement = [...baseArguments(limits, sized), ...(seccomp ? ['--seccomp', SECCOMP_FD] : []), ...(egress?.bwrapArguments() ?? []), ...readOnly]
      const args = [...confinement, '--bind', workspace, workspace, '--remount-ro', '/', '--chdir', workspace, 'bash', '-c', setup, command]
      const filter = seccomp ? seccompFilterFile(wrapOptions.denyLinks === true) : undefined
      if (roots.length === 0) return launch([], filter, file, args)
      const cgroup = createCommandCgroup(roots, wrapOptions.tenant, cgroupLimitsOf(limits), options.cgroupName)
      return cgroup === undefined ? refusal('its cgroups could not be created') : { ...launch(cgroup.folders, filter, file, args), release: () => cgroup.release() }
    },
  }
}

function egressOptions(options: BubblewrapOptions): Omit<EgressProxyOptions, 'socketPath'> {
  const allowDomains = options.allowDomains ?? []
  return options.resolveHost === undefined ? { allowDomains } : { allowDomains, resolveHost: options.resolveHost }
}

/**
 * Runs `file args` through `sh`, which joins every cgroup in `cgroups` (so every descendant is in them), opens the
 * seccomp filter file `filter` on fd 3 when given, and becomes `file`.
 */
function launch(cgroups: readonly string[], filter: string | undefined, file: string, args: string[]): WrappedCommand {
  const join = 'while [ "$1" != -- ]; do echo $$ > "$1/cgroup.procs" || exit 126; shift; done; shift'
  const exec = filter !== undefined ? `exec "$@" ${SECCOMP_FD}<"$0"` : 'exec "$@"'
  return { file: 'sh', args: ['-c', `${join}; ${exec}`, filter ?? 'zidane-launch', ...cgroups, '--', file, ...args] }
}

/** A command that fails at once, saying why: without its limits a command does not run at all. */
function refusal(reason: string): WrappedCommand {
  return { file: 'sh', args: ['-c', 'echo "zidane sandbox: the command was not run: $0" >&2; exit 126', reason] }
}

function baseArguments(limits: ResolvedSandboxLimits, sized: boolean): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--cap-drop', 'ALL', '--proc', '/proc', '--dev', '/dev']
  const size = (mebibytes: number): string[] => (sized ? ['--size', String(mebibytes * MIB)] : [])
  // /dev is a tmpfs of its own: read-only, but for the sized /dev/shm mounted on it first.
  args.push(...size(limits.shmMb), '--tmpfs', '/dev/shm', '--remount-ro', '/dev', ...size(limits.tmpMb), '--tmpfs', '/tmp')
  args.push('--setenv', 'PATH', SANDBOX_PATH)
  for (const folder of SYSTEM_FOLDERS) args.push(...systemFolder(folder))
  for (const path of ETC_FILES) args.push('--ro-bind-try', path, path)
  return args
}

const sizeSupport = new Map<string, boolean>()

/** Whether this `bwrap` has `--size` (bubblewrap 0.7.0 and later, not setuid): asked once per binary. */
function supportsTmpfsSize(file: string): boolean {
  const known = sizeSupport.get(file)
  if (known !== undefined) return known
  const help = spawnSync(file, ['--help'], { encoding: 'utf8', timeout: 5000 })
  const supported = `${help.stdout ?? ''}`.includes('--size')
  sizeSupport.set(file, supported)
  return supported
}

/** Merged-/usr hosts have /bin → usr/bin: recreate the link instead of binding a second copy. */
function systemFolder(folder: string): string[] {
  try {
    return lstatSync(folder).isSymbolicLink() ? ['--symlink', readlinkSync(folder), folder] : ['--ro-bind', folder, folder]
  } catch {
    return []
  }
}

/**
 * Whether `sandbox` can run a command here: runs `true` in it once. False when the binary is missing or the kernel
 * refuses the namespaces (some containers forbid user namespaces).
 */
export function isSandboxUsable(sandbox: CommandSandbox, workspace: string): boolean {
  const { file, args, release } = sandbox.wrap('true', workspace)
  const result = spawnSync(file, args, { stdio: 'ignore', timeout: 10_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } })
  release?.()
  return result.error === undefined && result.status === 0
}

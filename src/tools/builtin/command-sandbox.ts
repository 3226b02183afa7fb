import { spawnSync } from 'node:child_process'
import { lstatSync, readlinkSync } from 'node:fs'
import type { EgressProxyOptions } from './egress-proxy'
import { createPidsCgroup, findPidsCgroupRoot } from './pids-cgroup'
import { sandboxEgress } from './sandbox-egress'

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
}

/** Wraps a command line so it runs confined: `file` and `args` are what to spawn instead of `bash -c command`. */
export interface CommandSandbox {
  /** Human-readable name of the mechanism, for logs (`bubblewrap`). */
  readonly name: string
  /** What it enforces beyond confinement, for logs and status (`process cap 1024 (cgroup pids.max)`). */
  readonly details?: string
  /** The program and arguments that run `bash -c command` confined to `workspace` (read-write, also the working folder). */
  wrap(command: string, workspace: string, options?: WrapOptions): WrappedCommand
}

/** Resource limits applied inside the sandbox with `ulimit` (hard and soft), so a command cannot raise them. */
export interface SandboxLimits {
  /** Address space of each process, in MiB. Default 2048. */
  memoryMb?: number
  /** CPU time of each process, in seconds. Default 600. */
  cpuSeconds?: number
  /**
   * Processes of one command, all together: enforced by a cgroup's `pids.max` when the cgroup file system is writable
   * (root on the host), for root too; otherwise only by `ulimit -u`, which Linux does not enforce for root. Default 1024.
   */
  maxProcesses?: number
}

/** Options of `bubblewrapSandbox`. */
export interface BubblewrapOptions extends SandboxLimits {
  /** Path of the `bwrap` binary. Default `bwrap` (found on PATH). */
  bwrapPath?: string
  /** Folder of a cgroup hierarchy with the `pids` controller for the per-command cgroups; `false`: none. Default: found in /proc/self/mounts. */
  pidsCgroupRoot?: string | false
  /**
   * Hosts commands may reach over HTTP(S) through our filtering proxy (`example.com`, `*.example.com`); needs `socat`.
   * Default: none, and no network at all.
   */
  allowDomains?: readonly string[]
  /** How the proxy resolves allowed hosts. Default: the system resolver. */
  resolveHost?: EgressProxyOptions['resolveHost']
}

const SYSTEM_FOLDERS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/opt']
/** The few files of /etc programs need; never all of /etc (shadow, ssh host keys). */
const ETC_FILES = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/passwd', '/etc/group', '/etc/nsswitch.conf', '/etc/localtime', '/etc/ssl/certs', '/etc/ca-certificates', '/etc/bash.bashrc', '/etc/profile', '/etc/inputrc', '/etc/mime.types']

/**
 * A sandbox on bubblewrap: new user, pid, network, ipc, uts and cgroup namespaces (`--unshare-all`: no network at all,
 * so no host loopback service either), every capability dropped, system folders read-only, a private /tmp, /proc and
 * /dev, the workspace read-write and nothing else of the host's files. `--die-with-parent` plus the pid namespace
 * make every process of the command die with the `bwrap` process, which leads the process group the caller kills.
 */
export function bubblewrapSandbox(options: BubblewrapOptions = {}): CommandSandbox {
  const file = options.bwrapPath ?? 'bwrap'
  const maxProcesses = options.maxProcesses ?? 1024
  const egress = (options.allowDomains ?? []).length > 0 ? sandboxEgress(egressOptions(options)) : undefined
  const limits = `ulimit -v ${(options.memoryMb ?? 2048) * 1024} -t ${options.cpuSeconds ?? 600} -u ${maxProcesses} || exit 126`
  const setup = [limits, egress?.bridgeScript, 'exec bash -c "$0"'].filter(line => line !== undefined).join('\n')
  const cgroupRoot = options.pidsCgroupRoot === undefined ? findPidsCgroupRoot() : options.pidsCgroupRoot
  const processCap = cgroupRoot === false || cgroupRoot === undefined ? 'ulimit -u, not binding root' : 'cgroup pids.max'
  return {
    name: 'bubblewrap',
    details: `process cap ${maxProcesses} (${processCap})`,
    wrap: (command, workspace, wrapOptions = {}) => {
      const readOnly = (wrapOptions.readOnlyPaths ?? []).flatMap(path => ['--ro-bind', path, path])
      const args = [...baseArguments(), ...(egress?.bwrapArguments() ?? []), ...readOnly, '--bind', workspace, workspace, '--chdir', workspace, 'bash', '-c', setup, command]
      const cgroup = cgroupRoot === false || cgroupRoot === undefined ? undefined : createPidsCgroup(cgroupRoot, maxProcesses)
      return cgroup === undefined ? { file, args } : { ...insideCgroup(cgroup.path, file, args), release: () => cgroup.release() }
    },
  }
}

function egressOptions(options: BubblewrapOptions): Omit<EgressProxyOptions, 'socketPath'> {
  const allowDomains = options.allowDomains ?? []
  return options.resolveHost === undefined ? { allowDomains } : { allowDomains, resolveHost: options.resolveHost }
}

/** Runs `file args` as a member of the cgroup at `path`: `sh` joins it, then becomes `file`, so every descendant is in it. */
function insideCgroup(path: string, file: string, args: string[]): WrappedCommand {
  return { file: 'sh', args: ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$@"', path, file, ...args] }
}

function baseArguments(): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--cap-drop', 'ALL', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp']
  for (const folder of SYSTEM_FOLDERS) args.push(...systemFolder(folder))
  for (const path of ETC_FILES) args.push('--ro-bind-try', path, path)
  return args
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

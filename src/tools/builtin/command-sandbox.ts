import { spawnSync } from 'node:child_process'
import { lstatSync, readlinkSync } from 'node:fs'

/** Wraps a command line so it runs confined: `file` and `args` are what to spawn instead of `bash -c command`. */
export interface CommandSandbox {
  /** Human-readable name of the mechanism, for logs (`bubblewrap`). */
  readonly name: string
  /** The program and arguments that run `bash -c command` confined to `workspace` (read-write, also the working folder). */
  wrap(command: string, workspace: string): { file: string; args: string[] }
}

/** Resource limits applied inside the sandbox with `ulimit` (hard and soft), so a command cannot raise them. */
export interface SandboxLimits {
  /** Address space of each process, in MiB. Default 2048. */
  memoryMb?: number
  /** CPU time of each process, in seconds. Default 600. */
  cpuSeconds?: number
  /** Processes of the sandbox's user (not enforced when the services run as root). Default 1024. */
  maxProcesses?: number
}

/** Options of `bubblewrapSandbox`. */
export interface BubblewrapOptions extends SandboxLimits {
  /** Path of the `bwrap` binary. Default `bwrap` (found on PATH). */
  bwrapPath?: string
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
  const limits = `ulimit -v ${(options.memoryMb ?? 2048) * 1024} -t ${options.cpuSeconds ?? 600} -u ${options.maxProcesses ?? 1024} && exec bash -c "$0"`
  return {
    name: 'bubblewrap',
    wrap: (command, workspace) => ({
      file,
      args: [...baseArguments(), '--bind', workspace, workspace, '--chdir', workspace, 'bash', '-c', limits, command],
    }),
  }
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
  const { file, args } = sandbox.wrap('true', workspace)
  const result = spawnSync(file, args, { stdio: 'ignore', timeout: 10_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } })
  return result.error === undefined && result.status === 0
}

import { readFileSync } from 'node:fs'
import { totalmem } from 'node:os'
import type { CgroupRoot } from './cgroup-roots'
import type { SandboxCgroupLimits } from './tenant-cgroups'

/** Resource limits of sandboxed commands. Memory in MiB; each has a default that keeps a small host (2 cores, 24 GiB, pid_max 32768) safe. */
export interface SandboxLimits {
  /**
   * Memory of one command: the address space of each of its processes (`ulimit -v`) and, with cgroups, the memory of
   * all its processes together, its /tmp and /dev/shm included. Default 2048.
   */
  memoryMb?: number
  /** CPU time of each process, in seconds (`ulimit -t`). Default 600. */
  cpuSeconds?: number
  /**
   * Processes of one command, all together: enforced by a cgroup's `pids.max` when the cgroup file system is writable
   * (root on the host), for root too; otherwise only by `ulimit -u`, which Linux does not enforce for root. Default 1024.
   */
  maxProcesses?: number
  /** Memory of all the commands of one tenant together (cgroup), tmpfs pages included. Default 2048. */
  tenantMemoryMb?: number
  /** Processes of all the commands of one tenant together (cgroup `pids.max`). Default 512. */
  tenantMaxProcesses?: number
  /** CPU of all the commands of one tenant together, in percent of one CPU (cgroup CPU quota). Default 100. */
  tenantCpuPercent?: number
  /** Memory of every sandboxed command of the host together (cgroup). Default: three quarters of the host's memory. */
  allTenantsMemoryMb?: number
  /** Processes of every sandboxed command of the host together (cgroup). Default: half of the kernel's `pid_max`. */
  allTenantsMaxProcesses?: number
  /** Size of the command's private /tmp (tmpfs, counted in its memory). Default 256. */
  tmpMb?: number
  /** Size of the command's private /dev/shm (tmpfs, counted in its memory). Default 64. */
  shmMb?: number
  /** Disk the workspace may use (`workspaceUsageBytes`); also the largest file a command may write (`ulimit -f`). Default 1024. */
  workspaceQuotaMb?: number
}

/** `SandboxLimits` with every default filled in. */
export type ResolvedSandboxLimits = Required<SandboxLimits>

const MIB = 1024 * 1024

/** `limits` with the defaults of the unset ones (the host-wide ones read from this machine). */
export function resolveSandboxLimits(limits: SandboxLimits): ResolvedSandboxLimits {
  return {
    memoryMb: limits.memoryMb ?? 2048,
    cpuSeconds: limits.cpuSeconds ?? 600,
    maxProcesses: limits.maxProcesses ?? 1024,
    tenantMemoryMb: limits.tenantMemoryMb ?? 2048,
    tenantMaxProcesses: limits.tenantMaxProcesses ?? 512,
    tenantCpuPercent: limits.tenantCpuPercent ?? 100,
    allTenantsMemoryMb: limits.allTenantsMemoryMb ?? Math.floor((totalmem() / MIB) * 0.75),
    allTenantsMaxProcesses: limits.allTenantsMaxProcesses ?? Math.floor(kernelPidMax() / 2),
    tmpMb: limits.tmpMb ?? 256,
    shmMb: limits.shmMb ?? 64,
    workspaceQuotaMb: limits.workspaceQuotaMb ?? 1024,
  }
}

function kernelPidMax(): number {
  try {
    return Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim()) || 32_768
  } catch {
    return 32_768
  }
}

/** The cgroup limits of the three levels. */
export function cgroupLimitsOf(limits: ResolvedSandboxLimits): SandboxCgroupLimits {
  return {
    allTenants: { memoryBytes: limits.allTenantsMemoryMb * MIB, maxProcesses: limits.allTenantsMaxProcesses },
    tenant: { memoryBytes: limits.tenantMemoryMb * MIB, maxProcesses: limits.tenantMaxProcesses, cpuPercent: limits.tenantCpuPercent },
    command: { memoryBytes: limits.memoryMb * MIB, maxProcesses: limits.maxProcesses },
  }
}

/** The `ulimit` line run first in the sandbox (hard and soft limits, so a command cannot raise them; no core files). */
export function ulimitLine(limits: ResolvedSandboxLimits): string {
  return `ulimit -v ${limits.memoryMb * 1024} -t ${limits.cpuSeconds} -u ${limits.maxProcesses} -f ${limits.workspaceQuotaMb * 1024} -c 0 || exit 126`
}

/**
 * What the sandbox enforces, for logs and `/readyz`: the process cap first (`process cap 1024 (cgroup pids.max)`),
 * then the tenant's limits or why there are none, the command's, the tmpfs sizes, the quota and the seccomp filter.
 */
export function describeSandboxLimits(limits: ResolvedSandboxLimits, roots: readonly CgroupRoot[], features: { seccomp: boolean; sizedTmpfs: boolean }): string {
  const has = (controller: 'memory' | 'pids' | 'cpu'): boolean => roots.some(root => root.controllers.includes(controller))
  const processCap = has('pids') ? 'cgroup pids.max' : 'ulimit -u, not binding root'
  const tenant = roots.length === 0 ? 'no tenant limits (no writable cgroup file system: ulimit per process only)' : tenantDescription(limits, roots, has)
  const command = `per command: ${has('memory') ? `memory ${limits.memoryMb} MiB, ` : ''}address space ${limits.memoryMb} MiB and CPU ${limits.cpuSeconds} s per process`
  const tmpfs = features.sizedTmpfs ? `/tmp ${limits.tmpMb} MiB, /dev/shm ${limits.shmMb} MiB` : '/tmp and /dev/shm unsized (bwrap without --size)'
  const seccomp = features.seccomp ? 'seccomp filter' : 'no seccomp filter'
  return [`process cap ${limits.maxProcesses} (${processCap})`, tenant, command, tmpfs, `workspace quota ${limits.workspaceQuotaMb} MiB`, seccomp].join('; ')
}

function tenantDescription(limits: ResolvedSandboxLimits, roots: readonly CgroupRoot[], has: (controller: 'memory' | 'pids' | 'cpu') => boolean): string {
  const parts = [has('memory') ? `memory ${limits.tenantMemoryMb} MiB` : 'no memory cap', has('pids') ? `${limits.tenantMaxProcesses} processes` : 'no process cap', has('cpu') ? `CPU ${limits.tenantCpuPercent}%` : 'no CPU cap']
  const versions = [...new Set(roots.map(root => `v${root.version}`))].join('+')
  const all = [has('memory') ? `memory ${limits.allTenantsMemoryMb} MiB` : undefined, has('pids') ? `${limits.allTenantsMaxProcesses} processes` : undefined].filter(part => part !== undefined)
  return `per tenant (cgroup ${versions}): ${parts.join(', ')}; all tenants: ${all.length > 0 ? all.join(', ') : 'no cap'}`
}

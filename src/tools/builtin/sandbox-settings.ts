import { tmpdir } from 'node:os'
import { bubblewrapSandbox, isSandboxUsable } from './command-sandbox'
import type { BubblewrapOptions, CommandSandbox } from './command-sandbox'
import type { SandboxLimits } from './sandbox-limits'

/** How `shell` commands run: `auto` (in the sandbox when it works here), `required` (in it or not at all), `off`. */
export type SandboxMode = 'auto' | 'required' | 'off'

/** The outcome of `sandboxFromSettings`: how commands run, why, and the sandbox when there is one. */
export interface SandboxChoice {
  mode: 'sandboxed' | 'unsandboxed' | 'disabled'
  reason: string
  sandbox?: CommandSandbox
}

/** Comma-separated list → its trimmed, non-empty items. */
export function listSetting(value: string | undefined): string[] {
  return (value ?? '').split(',').map(item => item.trim()).filter(Boolean)
}

function positive(value: string | undefined): number | undefined {
  const parsed = Number(value)
  return value !== undefined && value !== '' && Number.isFinite(parsed) && parsed > 0 ? parsed : undefined
}

/** Whether `value` is a `SandboxMode`. */
export function isSandboxMode(value: string | undefined): value is SandboxMode {
  return value === 'auto' || value === 'required' || value === 'off'
}

/** The environment variables of the sandbox's limits, and the option each sets (a positive number, in MiB where named so). */
const LIMIT_SETTINGS = {
  ZIDANE_SANDBOX_MEMORY_MB: 'memoryMb',
  ZIDANE_SANDBOX_CPU_SECONDS: 'cpuSeconds',
  ZIDANE_SANDBOX_MAX_PROCESSES: 'maxProcesses',
  ZIDANE_TENANT_MEMORY_MB: 'tenantMemoryMb',
  ZIDANE_TENANT_MAX_PROCESSES: 'tenantMaxProcesses',
  ZIDANE_TENANT_CPU_PERCENT: 'tenantCpuPercent',
  ZIDANE_SANDBOX_TOTAL_MEMORY_MB: 'allTenantsMemoryMb',
  ZIDANE_SANDBOX_TOTAL_MAX_PROCESSES: 'allTenantsMaxProcesses',
  ZIDANE_SANDBOX_TMP_MB: 'tmpMb',
  ZIDANE_SANDBOX_SHM_MB: 'shmMb',
  ZIDANE_WORKSPACE_QUOTA_MB: 'workspaceQuotaMb',
} as const satisfies Record<string, keyof SandboxLimits>

/** Every environment variable `sandboxFromSettings` reads. */
export const SANDBOX_SETTINGS: readonly string[] = ['ZIDANE_SANDBOX', 'ZIDANE_SANDBOX_BWRAP', 'ZIDANE_SANDBOX_ALLOW_DOMAINS', 'ZIDANE_SANDBOX_CGROUP', ...Object.keys(LIMIT_SETTINGS)]

/** `bubblewrapSandbox` options from `ZIDANE_SANDBOX_BWRAP`, the limits (`LIMIT_SETTINGS`) and `ZIDANE_SANDBOX_ALLOW_DOMAINS`. */
export function bubblewrapOptionsFrom(env: NodeJS.ProcessEnv): BubblewrapOptions {
  const limits = Object.entries(LIMIT_SETTINGS).map(([name, option]) => [option, positive(env[name])])
  const cgroupName = env.ZIDANE_SANDBOX_CGROUP !== undefined && /^[A-Za-z0-9_-]{1,64}$/.test(env.ZIDANE_SANDBOX_CGROUP) ? env.ZIDANE_SANDBOX_CGROUP : undefined
  const options = { bwrapPath: env.ZIDANE_SANDBOX_BWRAP, cgroupName, allowDomains: listSetting(env.ZIDANE_SANDBOX_ALLOW_DOMAINS), ...Object.fromEntries(limits) }
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined))
}

/**
 * Decides how `shell` commands run from the settings the services and the CLI share (`SANDBOX_SETTINGS`):
 * `ZIDANE_SANDBOX` (or `mode`, which wins), `ZIDANE_SANDBOX_BWRAP`, the limits and `ZIDANE_SANDBOX_ALLOW_DOMAINS`.
 * Probes the sandbox by running `true` in it once (in `probeFolder`).
 */
export function sandboxFromSettings(env: NodeJS.ProcessEnv, mode: SandboxMode = isSandboxMode(env.ZIDANE_SANDBOX) ? env.ZIDANE_SANDBOX : 'auto', probeFolder = tmpdir()): SandboxChoice {
  if (mode === 'off') return { mode: 'unsandboxed', reason: 'the sandbox is turned off (ZIDANE_SANDBOX=off)' }
  const options = bubblewrapOptionsFrom(env)
  const sandbox = bubblewrapSandbox(options)
  const network = (options.allowDomains ?? []).length > 0 ? `network only to ${(options.allowDomains ?? []).join(', ')}` : 'no network'
  if (isSandboxUsable(sandbox, probeFolder)) return { mode: 'sandboxed', reason: `commands run in a bubblewrap sandbox: ${network}; ${sandbox.details ?? ''}`, sandbox }
  const needs = (options.allowDomains ?? []).length > 0 ? ' with socat for the allowed domains' : ''
  const missing = `the sandbox (${options.bwrapPath ?? 'bwrap'}${needs}) is not usable here`
  if (mode === 'required') return { mode: 'disabled', reason: `${missing} and the sandbox is required` }
  return { mode: 'unsandboxed', reason: `${missing}: commands run as this process's user` }
}

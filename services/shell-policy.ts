import { tmpdir } from 'node:os'
import { bubblewrapSandbox, isSandboxUsable } from 'zidane/tools'
import type { ShellToolOptions } from 'zidane/tools'

/** How the `shell` tool runs in this deployment, and why: reported at start-up and by the gateway's `/readyz`. */
export interface ShellStatus {
  mode: 'sandboxed' | 'unsandboxed' | 'disabled'
  reason: string
}

/** The shell's status and the options of the shell tool that go with it. */
export interface ShellPolicy {
  status: ShellStatus
  options: ShellToolOptions
}

function listFrom(value: string | undefined): string[] {
  return (value ?? '').split(',').map(item => item.trim()).filter(Boolean)
}

function positive(value: string | undefined): number | undefined {
  const parsed = Number(value)
  return value !== undefined && value !== '' && Number.isFinite(parsed) && parsed > 0 ? parsed : undefined
}

/** Whether the operator's tool settings leave `shell` out (`ZIDANE_TOOLS` allow-list, `ZIDANE_DISABLE_TOOLS` deny-list). */
export function isToolSelected(name: string, env: NodeJS.ProcessEnv): boolean {
  const allowed = listFrom(env.ZIDANE_TOOLS)
  if (allowed.length > 0 && !allowed.includes(name)) return false
  return !listFrom(env.ZIDANE_DISABLE_TOOLS).includes(name)
}

const cache = new Map<string, ShellPolicy>()

/**
 * Decides how `shell` runs from `ZIDANE_SANDBOX` (`auto`: in the sandbox when it works here, else unsandboxed;
 * `required`: in the sandbox or not at all; `off`: unsandboxed), `ZIDANE_SANDBOX_BWRAP` and the limits
 * (`ZIDANE_SANDBOX_MEMORY_MB`, `_CPU_SECONDS`, `_MAX_PROCESSES`). Probes the sandbox once per setting.
 */
export function shellPolicy(env: NodeJS.ProcessEnv = process.env): ShellPolicy {
  const key = JSON.stringify([env.ZIDANE_SANDBOX, env.ZIDANE_SANDBOX_BWRAP, env.ZIDANE_SANDBOX_MEMORY_MB, env.ZIDANE_SANDBOX_CPU_SECONDS, env.ZIDANE_SANDBOX_MAX_PROCESSES, env.ZIDANE_TOOL_ENV, env.ZIDANE_TOOLS, env.ZIDANE_DISABLE_TOOLS])
  const known = cache.get(key)
  if (known) return known
  const policy = decide(env)
  cache.set(key, policy)
  return policy
}

function decide(env: NodeJS.ProcessEnv): ShellPolicy {
  const passEnv = listFrom(env.ZIDANE_TOOL_ENV)
  if (!isToolSelected('shell', env)) return { status: { mode: 'disabled', reason: 'left out by ZIDANE_TOOLS / ZIDANE_DISABLE_TOOLS' }, options: { passEnv } }
  const mode = env.ZIDANE_SANDBOX ?? 'auto'
  if (mode === 'off') return { status: { mode: 'unsandboxed', reason: 'ZIDANE_SANDBOX=off' }, options: { passEnv } }
  const limits = { memoryMb: positive(env.ZIDANE_SANDBOX_MEMORY_MB), cpuSeconds: positive(env.ZIDANE_SANDBOX_CPU_SECONDS), maxProcesses: positive(env.ZIDANE_SANDBOX_MAX_PROCESSES) }
  const sandbox = bubblewrapSandbox(Object.fromEntries(Object.entries({ ...limits, bwrapPath: env.ZIDANE_SANDBOX_BWRAP }).filter(([, value]) => value !== undefined)))
  if (isSandboxUsable(sandbox, tmpdir())) return { status: { mode: 'sandboxed', reason: 'commands run in a bubblewrap sandbox' }, options: { passEnv, sandbox } }
  const missing = `the sandbox (${env.ZIDANE_SANDBOX_BWRAP ?? 'bwrap'}) is not usable here`
  if (mode === 'required') return { status: { mode: 'disabled', reason: `${missing} and ZIDANE_SANDBOX=required (more than one API key)` }, options: { passEnv } }
  return { status: { mode: 'unsandboxed', reason: `${missing}: commands run as the services' user` }, options: { passEnv } }
}

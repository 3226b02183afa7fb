import { listSetting, sandboxFromSettings } from 'zidane/tools'
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

/** Whether the operator's tool settings leave `shell` out (`ZIDANE_TOOLS` allow-list, `ZIDANE_DISABLE_TOOLS` deny-list). */
export function isToolSelected(name: string, env: NodeJS.ProcessEnv): boolean {
  const allowed = listSetting(env.ZIDANE_TOOLS)
  if (allowed.length > 0 && !allowed.includes(name)) return false
  return !listSetting(env.ZIDANE_DISABLE_TOOLS).includes(name)
}

/**
 * Decides how `shell` runs: left out by the tool settings, else as `sandboxFromSettings` says (`ZIDANE_SANDBOX`
 * `auto` / `required` / `off`, the bwrap path, the limits, `ZIDANE_SANDBOX_ALLOW_DOMAINS`), with the variables of
 * `ZIDANE_TOOL_ENV` passed on. Probes the sandbox on each call: a composition decides it once.
 */
export function shellPolicy(env: NodeJS.ProcessEnv): ShellPolicy {
  const passEnv = listSetting(env.ZIDANE_TOOL_ENV)
  if (!isToolSelected('shell', env)) return { status: { mode: 'disabled', reason: 'left out by ZIDANE_TOOLS / ZIDANE_DISABLE_TOOLS' }, options: { passEnv } }
  const { mode, reason, sandbox } = sandboxFromSettings(env)
  const why = mode === 'disabled' ? `${reason} (ZIDANE_SANDBOX=required: more than one API key)` : reason
  return { status: { mode, reason: why }, options: sandbox ? { passEnv, sandbox } : { passEnv } }
}

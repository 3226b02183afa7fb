import type { ToolDef } from 'zidane'
import { createBuiltinTools } from 'zidane/tools'
import type { BuiltinToolsOptions } from 'zidane/tools'
import { isToolSelected, shellPolicy } from './shell-policy'
import type { ShellPolicy } from './shell-policy'

/**
 * The built-in tools of a session's workspace `root`, with the shell's sandbox and environment from `policy`; their sandboxed processes share the limits of `tenant` (see `tenantOfSessionKey`).
 */
export function builtinTools(root: string, env: NodeJS.ProcessEnv, policy: ShellPolicy, tenant?: string): ToolDef[] {
  return createBuiltinTools(builtinToolsOptions(root, env, policy, tenant))
}

/**
 * What `createBuiltinTools` gets for a session's workspace: the shell's options, the tenant, and the file tools' time
 * limit (`ZIDANE_FILE_TOOL_TIMEOUT_MS`, default 20 s) and workspace quota (`ZIDANE_WORKSPACE_QUOTA_MB`, default 1024,
 * the sandbox's): the quota binds the file tools' writes also where no sandbox runs them.
 */
export function builtinToolsOptions(root: string, env: NodeJS.ProcessEnv, policy: ShellPolicy, tenant?: string): BuiltinToolsOptions {
  const timeoutMs = positiveInteger(env.ZIDANE_FILE_TOOL_TIMEOUT_MS)
  const quotaBytes = policy.options.sandbox?.workspaceQuotaBytes ?? (positiveInteger(env.ZIDANE_WORKSPACE_QUOTA_MB) ?? DEFAULT_WORKSPACE_QUOTA_MB) * 1024 * 1024
  const files = { quotaBytes, ...(timeoutMs === undefined ? {} : { timeoutMs }) }
  return { root, shell: policy.options, files, ...(tenant === undefined ? {} : { tenant }) }
}

/** The workspace quota of file tools that run without the sandbox, when `ZIDANE_WORKSPACE_QUOTA_MB` is unset. */
const DEFAULT_WORKSPACE_QUOTA_MB = 1024

function positiveInteger(value: string | undefined): number | undefined {
  const parsed = Number(value)
  return value !== undefined && value !== '' && Number.isInteger(parsed) && parsed > 0 ? parsed : undefined
}

/**
 * The shell's policy as this process's sandbox allows it, whatever the operator's tool selection: how a run whose
 * tools were chosen when it started (`toolsOfSettings`) runs its shell.
 */
function shellCapability(env: NodeJS.ProcessEnv): ShellPolicy {
  return shellPolicy({ ...env, ZIDANE_TOOLS: undefined, ZIDANE_DISABLE_TOOLS: undefined })
}

/** The tools of one composition, decided once from its environment: the shell's policies and the built-ins' names. */
export interface ToolOffer {
  /** How `shell` runs by the operator's selection (reported at start-up). */
  shell: ShellPolicy
  /** What `createBuiltinTools` gets for workspace `root` of `tenant`, with the shell of `capability`. */
  options(root: string, tenant: string): BuiltinToolsOptions
  /** The built-ins' names (read once), then `extra`, as the operator's selection keeps them. */
  offered(root: string, extra: readonly string[]): string[]
  /** The shell as the sandbox allows it, whatever the selection: how runs whose tools were chosen at their start run it. */
  capability: ShellPolicy
  /** Says that the run in workspace `root` ended: its warm file workers may make room for other sessions' at once. */
  settle?(root: string): void
}

/** The {@link ToolOffer} of `env`: probes the sandbox once (the selection only decides whether `shell` is left out). */
export function createToolOffer(env: NodeJS.ProcessEnv): ToolOffer {
  const capability = shellCapability(env)
  // The selection's policy is the capability unless the selection leaves `shell` out (then no probe at all).
  const shell = isToolSelected('shell', env) ? capability : shellPolicy(env)
  let builtinNames: string[] | undefined
  return {
    shell,
    capability,
    options: (root, tenant) => builtinToolsOptions(root, env, capability, tenant),
    // Building the tools creates `root`: the workspace root, the first time.
    offered: (root, extra) => selectToolNames([...(builtinNames ??= builtinTools(root, env, capability).map(tool => tool.spec.name)), ...extra], env, shell),
  }
}

/**
 * The names the operator allows, in order: `ZIDANE_TOOLS` (comma-separated allow-list, every tool when unset) minus
 * `ZIDANE_DISABLE_TOOLS`; `shell` also goes when its policy disables it (sandbox required but not usable).
 */
export function selectToolNames(names: readonly string[], env: NodeJS.ProcessEnv, policy: ShellPolicy = shellPolicy(env)): string[] {
  const shellOff = policy.status.mode === 'disabled'
  return names.filter(name => isToolSelected(name, env) && !(shellOff && name === 'shell'))
}

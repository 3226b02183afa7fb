import type { ToolDef } from 'zidane'
import { createBuiltinTools } from 'zidane/tools'
import { isToolSelected, shellPolicy } from './shell-policy'

/** The built-in tools of a session's workspace `root`, with the shell's sandbox and environment from `shellPolicy`. */
export function builtinTools(root: string, env: NodeJS.ProcessEnv = process.env): ToolDef[] {
  return createBuiltinTools({ root, shell: shellPolicy(env).options })
}

/**
 * The tools the operator allows, in order: `ZIDANE_TOOLS` (comma-separated allow-list, every tool when unset) minus
 * `ZIDANE_DISABLE_TOOLS`; `shell` also goes when its policy disables it (sandbox required but not usable).
 */
export function selectTools(tools: readonly ToolDef[], env: NodeJS.ProcessEnv = process.env): ToolDef[] {
  const shellOff = shellPolicy(env).status.mode === 'disabled'
  return tools.filter(tool => isToolSelected(tool.spec.name, env) && !(shellOff && tool.spec.name === 'shell'))
}

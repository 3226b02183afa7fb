import type { AgentBehavior } from 'zidane'
import { builtinWorkspace, workspaceOutputWriter } from 'zidane/tools'
import type { ShellPolicy } from './shell-policy'
import { builtinToolsOptions } from './tool-selection'

/**
 * Where a session run keeps tool outputs over 256 KiB: the operator's `ZIDANE_PERSIST_DIR` when set (a folder no
 * tenant can reach), else `tool-results/` of the session's workspace, written by its sandboxed file worker so a link
 * the tenant planted there is refused instead of followed by this process.
 */
export function sessionOutputs(persistDir: string | undefined, root: string, shell: ShellPolicy, tenant: string): Pick<AgentBehavior, 'persistDir' | 'persistOutput'> {
  if (persistDir !== undefined) return { persistDir }
  const workspace = builtinWorkspace(builtinToolsOptions(root, process.env, shell, tenant))
  return { persistOutput: workspaceOutputWriter(workspace) }
}

import type { AgentBehavior } from 'zidane'
import { builtinWorkspace, workspaceOutputWriter } from 'zidane/tools'
import type { BuiltinToolsOptions } from 'zidane/tools'

/**
 * Where a run keeps tool outputs over 256 KiB: the operator's `ZIDANE_PERSIST_DIR` when set (a folder no tenant can
 * reach), else `tool-results/` of the workspace of `tools`, written by its sandboxed file worker so a link the tenant
 * planted there is refused instead of followed by this process.
 */
export function sessionOutputs(persistDir: string | undefined, tools: BuiltinToolsOptions): Pick<AgentBehavior, 'persistDir' | 'persistOutput'> {
  if (persistDir !== undefined) return { persistDir }
  return { persistOutput: workspaceOutputWriter(builtinWorkspace(tools)) }
}

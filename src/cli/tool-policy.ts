import type { CreateAgentOptions, ToolPermission } from '../agent/types'
import type { RunArgs } from './parse-args'

/**
 * `canUseTool` of `zidane run --approve … --deny …`: denied tools are refused, approval tools ask (on a terminal, or
 * through `zidane answer`), every other tool runs. None without either flag.
 */
export function cliToolPolicy(args: Pick<RunArgs, 'approve' | 'deny'>): Pick<CreateAgentOptions, 'canUseTool'> {
  const approve = args.approve ?? []
  const deny = args.deny ?? []
  if (approve.length === 0 && deny.length === 0) return {}
  return {
    canUseTool: (call): ToolPermission => {
      if (deny.includes(call.name)) return { deny: 'refused by --deny' }
      return approve.includes(call.name) ? 'ask' : 'allow'
    },
  }
}

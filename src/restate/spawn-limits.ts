import type { ToolContext } from '../tools/tool'

/** Limits a `spawn` tool puts on the sub-agents of one run (and, through the requests, on their subtrees). */
export interface SpawnLimits {
  /** Cost budget of the run, its children included: each child runs under its share of what remains. */
  maxCostUsd?: number
  /** Sub-agents one turn may start; further `spawn` calls of that turn are refused with an error result. */
  maxChildrenPerTurn?: number
  /** Sub-agents the whole run tree below this run may start (children, grandchildren, …). */
  maxChildrenPerTree?: number
}

/** What one spawn call may do: refused (the reason), or run with the child's own limits. */
export type SpawnAllowance = { refusal: string } | { maxCostUsd?: number; maxChildrenPerTree?: number }

/** What the run's children used so far: their cost and how many sub-agents they were (descendants included). */
export interface ChildUsage {
  costUsd: number
  children: number
}

/**
 * Decides a spawn call from the session (replay-stable: the run's own assistant turns and the children settled so
 * far). The remaining budget and tree allowance are split evenly among the turn's spawn calls, so the siblings of a
 * fan-out together stay within what the run has left.
 */
export function spawnAllowance(limits: SpawnLimits, ctx: ToolContext, used: ChildUsage): SpawnAllowance {
  const { spawnCallIds, modelCostUsd } = runSoFar(ctx)
  const index = Math.max(0, spawnCallIds.indexOf(ctx.callId))
  const perTurn = limits.maxChildrenPerTurn ?? Number.POSITIVE_INFINITY
  if (index >= perTurn) return { refusal: `at most ${perTurn} sub-agents may start in one turn` }
  const siblings = Math.min(Math.max(spawnCallIds.length, 1), perTurn)
  const allowance: { maxCostUsd?: number; maxChildrenPerTree?: number } = {}
  if (limits.maxChildrenPerTree !== undefined) {
    const left = limits.maxChildrenPerTree - used.children
    if (index >= left) return { refusal: `the run tree may start at most ${limits.maxChildrenPerTree} sub-agents` }
    allowance.maxChildrenPerTree = Math.max(0, Math.floor((left - Math.min(siblings, left)) / Math.min(siblings, left)))
  }
  if (limits.maxCostUsd !== undefined) {
    const left = limits.maxCostUsd - modelCostUsd - used.costUsd
    if (left <= 0) return { refusal: `the cost budget of $${limits.maxCostUsd} is spent` }
    allowance.maxCostUsd = left / siblings
  }
  return allowance
}

/** The run's own model spend so far and the spawn call ids of its latest assistant turn (the current one). */
function runSoFar(ctx: ToolContext): { spawnCallIds: string[]; modelCostUsd: number } {
  const turns = (ctx.session?.turns ?? []).filter(turn => turn.runId === ctx.runId && turn.role === 'assistant')
  const modelCostUsd = turns.reduce((sum, turn) => sum + (turn.costUsd ?? 0), 0)
  const latest = turns.at(-1)?.content ?? []
  const spawnCallIds = latest.flatMap(block => (block.type === 'tool_use' && block.name === ctx.toolName ? [block.id] : []))
  return { spawnCallIds, modelCostUsd }
}

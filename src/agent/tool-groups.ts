import type { ToolUseBlock } from '../providers/content'
import type { ToolDef } from '../tools/tool'

/** Whether a call may run together with other concurrency-safe calls. */
export function isCallConcurrencySafe(call: ToolUseBlock, tool: ToolDef | undefined): boolean {
  if (!tool) return true
  const flag = tool.isConcurrencySafe
  return typeof flag === 'function' ? flag(call.input) : flag === true
}

/**
 * Splits a turn's calls, in the model's order, into groups that run one after the other: consecutive
 * concurrency-safe calls share a group (at most `maxConcurrent`), every other call is a group of its own.
 */
export function groupToolCalls(calls: readonly ToolUseBlock[], tools: ReadonlyMap<string, ToolDef>, maxConcurrent: number): ToolUseBlock[][] {
  // A turn of one call (most turns) is one group: nothing to split.
  if (calls.length === 1) return [[...calls]]
  const groups: ToolUseBlock[][] = []
  let current: ToolUseBlock[] = []
  for (const call of calls) {
    const alone = !isCallConcurrencySafe(call, tools.get(call.name)) || maxConcurrent <= 1
    if (current.length > 0 && (alone || current.length >= maxConcurrent)) {
      groups.push(current)
      current = []
    }
    if (alone) groups.push([call])
    else current.push(call)
  }
  if (current.length > 0) groups.push(current)
  return groups
}

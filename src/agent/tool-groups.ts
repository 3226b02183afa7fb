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
  const groups: ToolUseBlock[][] = []
  let current: ToolUseBlock[] = []
  const flush = (): void => { if (current.length > 0) groups.push(current); current = [] }
  for (const call of calls) {
    if (!isCallConcurrencySafe(call, tools.get(call.name)) || maxConcurrent <= 1) {
      flush()
      groups.push([call])
      continue
    }
    if (current.length >= maxConcurrent) flush()
    current.push(call)
  }
  flush()
  return groups
}

import type { ToolResultBlock, ToolUseBlock } from '../providers/content'
import type { SessionTurn } from './types'

/** The result given to a tool call that a dead process left without a result, when the run is healed rather than resumed. */
export const HEAL_TEXT = '[Tool use interrupted] The run stopped before this call finished and was not resumed. Its effect may or may not have happened: check before you run it again.'

/** The exact result a resumed run gives an unsafe tool call that was in flight when its process stopped. */
export const INTERRUPTED_TOOL_TEXT = '[Tool use interrupted] The process running this call stopped before it finished. Its effect may or may not have happened: check before you run it again.'

/** The tool_use blocks of `turns` that no later tool_result answers. */
export function findOpenToolCalls(turns: readonly SessionTurn[]): ToolUseBlock[] {
  const answered = new Set<string>()
  for (const turn of turns) for (const block of turn.content) if (block.type === 'tool_result') answered.add(block.toolUseId)
  const open: ToolUseBlock[] = []
  for (const turn of turns) for (const block of turn.content) if (block.type === 'tool_use' && !answered.has(block.id)) open.push(block)
  return open
}

/**
 * Returns the turns that close every open tool call with `text`, so the history is valid for the Messages API
 * again (each tool_use followed by its tool_result in the next user turn). Returns an empty list when none are open.
 */
export function buildHealTurns(turns: readonly SessionTurn[], text: string, runId: string, now: number): SessionTurn[] {
  const open = findOpenToolCalls(turns)
  if (open.length === 0) return []
  const results: ToolResultBlock[] = open.map(call => ({ type: 'tool_result', toolUseId: call.id, content: text, isError: true }))
  const id = `heal-${open.map(call => call.id).join('-').slice(0, 120)}`
  return [{ id, runId, role: 'user', content: results, createdAt: now }]
}

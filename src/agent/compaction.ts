import type { Message } from '../providers/content'

/** Estimated-token budget of the history under the `'tail'` strategy when `compactBudgetTokens` is not set. */
export const DEFAULT_COMPACT_BUDGET_TOKENS = 100_000

/** A rough token estimate of a message list (4 characters a token). */
export function estimateTokens(messages: readonly Message[]): number {
  return Math.ceil(JSON.stringify(messages).length / 4)
}

/**
 * The `'tail'` strategy: drops the oldest messages until the estimate fits `budgetTokens`, cutting only before a
 * user message that carries no tool_result (so no tool_use/tool_result pair is split). Keeps at least the last
 * such user message onward. Returns the kept messages and how many were dropped.
 */
export function compactTail(messages: readonly Message[], budgetTokens: number): { messages: Message[]; dropped: number } {
  if (estimateTokens(messages) <= budgetTokens) return { messages: [...messages], dropped: 0 }
  const cuts = safeCutPoints(messages)
  for (const cut of cuts) {
    const tail = messages.slice(cut)
    if (estimateTokens(tail) <= budgetTokens) return { messages: tail, dropped: cut }
  }
  const last = cuts.at(-1) ?? 0
  return { messages: messages.slice(last), dropped: last }
}

function safeCutPoints(messages: readonly Message[]): number[] {
  const cuts: number[] = []
  messages.forEach((message, index) => {
    if (index > 0 && message.role === 'user' && !message.content.some(block => block.type === 'tool_result')) cuts.push(index)
  })
  return cuts
}

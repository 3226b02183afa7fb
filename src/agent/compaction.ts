import type { Message } from '../providers/content'

/** Estimated-token budget of the history under the `'tail'` strategy when `compactBudgetTokens` is not set. */
export const DEFAULT_COMPACT_BUDGET_TOKENS = 100_000

/**
 * JSON length of each message, remembered while its role and content array stay the same. The loop never changes a
 * content array in place (`appendMessage` assigns a new one), so each message is serialized once, not once a turn:
 * without it the `'tail'` strategy serialized the whole history at every turn. Kept per message object, so it holds
 * nothing once a run's messages are gone.
 */
const messageLengths = new WeakMap<Message, { role: Message['role']; content: Message['content']; length: number }>()

function jsonLength(message: Message): number {
  const known = messageLengths.get(message)
  if (known && known.content === message.content && known.role === message.role) return known.length
  const length = JSON.stringify(message).length
  messageLengths.set(message, { role: message.role, content: message.content, length })
  return length
}

/** Characters of `JSON.stringify(messages)`, from each message's remembered length and the array's brackets and commas. */
function jsonLengthOf(messages: readonly Message[]): number {
  let characters = messages.length === 0 ? 2 : messages.length + 1
  for (const message of messages) characters += jsonLength(message)
  return characters
}

/** A rough token estimate of a message list (4 characters a token of its JSON). */
export function estimateTokens(messages: readonly Message[]): number {
  return Math.ceil(jsonLengthOf(messages) / 4)
}

/**
 * The `'tail'` strategy: drops the oldest messages until the estimate fits `budgetTokens`, cutting only before a
 * user message that carries no tool_result (so no tool_use/tool_result pair is split). Keeps at least the last
 * such user message onward. Returns the kept messages and how many were dropped.
 */
export function compactTail(messages: readonly Message[], budgetTokens: number): { messages: Message[]; dropped: number } {
  const total = jsonLengthOf(messages)
  if (Math.ceil(total / 4) <= budgetTokens) return { messages: [...messages], dropped: 0 }
  const cuts = safeCutPoints(messages)
  // The tail from `cut` on is the whole list less the messages before it and their commas.
  let before = 0
  let counted = 0
  for (const cut of cuts) {
    for (; counted < cut; counted++) before += jsonLength(messages[counted] as Message) + 1
    if (Math.ceil((total - before) / 4) <= budgetTokens) return { messages: messages.slice(cut), dropped: cut }
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

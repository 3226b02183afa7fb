import type { ContentBlock, Message } from '../providers/content'
import { compactTail } from './compaction'
import type { SessionData, SessionTurn } from '../session/types'

/** Turns that belong to this conversation's own runs (sub-agent turns merged into the session are left out). */
export function conversationTurns(session: Pick<SessionData, 'turns' | 'runs'>, depth: number): SessionTurn[] {
  const foreignRuns = new Set(session.runs.filter(run => run.depth !== depth).map(run => run.id))
  return session.turns.filter(turn => !foreignRuns.has(turn.runId))
}

/**
 * The absolute index of the first turn the `'tail'` strategy keeps from the history `turns` (which start at absolute
 * index `offset`), or `offset` when nothing would be dropped. A cut always falls on a prompt turn, never between a
 * tool_use and its tool_result.
 */
export function tailCutTurn(turns: readonly SessionTurn[], offset: number, budgetTokens: number, foreignRunIds: ReadonlySet<string>): number {
  const messages: Message[] = []
  const firstTurnOfMessage: number[] = []
  turns.forEach((turn, index) => {
    if (foreignRunIds.has(turn.runId)) return
    const before = messages.length
    appendMessage(messages, turn.role, turn.content)
    if (messages.length > before) firstTurnOfMessage.push(offset + index)
  })
  const { dropped } = compactTail(messages, budgetTokens)
  return dropped > 0 ? firstTurnOfMessage[dropped] ?? offset : offset
}

/** Builds the message list from turns, merging consecutive turns of the same role (the API needs alternation). */
export function turnsToMessages(turns: readonly SessionTurn[]): Message[] {
  const messages: Message[] = []
  for (const turn of turns) appendMessage(messages, turn.role, turn.content)
  return messages
}

/** Appends content as a message, merged into the last message when it has the same role. */
export function appendMessage(messages: Message[], role: Message['role'], content: readonly ContentBlock[]): void {
  const last = messages.at(-1)
  if (last && last.role === role) {
    last.content = [...orderUserContent(last.content, content, role)]
    return
  }
  messages.push({ role, content: [...content] })
}

function orderUserContent(existing: readonly ContentBlock[], added: readonly ContentBlock[], role: Message['role']): ContentBlock[] {
  const merged = [...existing, ...added]
  if (role !== 'user') return merged
  // tool_result blocks must come first in a user message.
  return [...merged.filter(block => block.type === 'tool_result'), ...merged.filter(block => block.type !== 'tool_result')]
}

/** How many turns before a run's start its checkpoint fingerprints (a rewrite of the older history does not matter to a resume). */
export const CHECKPOINT_FINGERPRINT_TURNS = 16

/** A short, stable fingerprint of turns (their ids and count): detects a history rewritten under a checkpoint. */
export function fingerprintTurns(turns: readonly SessionTurn[]): string {
  let hash = 2166136261
  for (const turn of turns) {
    for (let index = 0; index < turn.id.length; index++) {
      hash ^= turn.id.charCodeAt(index)
      hash = Math.imul(hash, 16777619) >>> 0
    }
  }
  return `${turns.length}:${hash.toString(16)}`
}

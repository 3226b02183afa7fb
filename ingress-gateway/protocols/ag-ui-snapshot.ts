import type { AssistantMessage, Message, ToolCall } from '@ag-ui/core'
import type { SessionView } from '../../contract/session'

type SessionTurn = SessionView['turns'][number]
type ContentBlock = SessionTurn['content'][number]

/** The turn fields a snapshot reads (the session view's turns, passed through as JSON). */
export type SnapshotTurn = Pick<SessionTurn, 'id' | 'role' | 'content'>

/**
 * The AG-UI messages of a session's journaled turns, in order: a user turn's text is a user message and each of its
 * tool results a tool message (`<turn id>:<call id>`); an assistant turn is one assistant message with its text and
 * tool calls (arguments as JSON). Thinking and images are left out. Ids are the turns', stable across reads.
 */
export function snapshotMessages(turns: readonly SnapshotTurn[]): Message[] {
  return turns.flatMap(turn => (turn.role === 'assistant' ? assistantMessages(turn) : userMessages(turn)))
}

function assistantMessages(turn: SnapshotTurn): Message[] {
  const text = textOf(turn.content)
  const toolCalls: ToolCall[] = turn.content.flatMap(block => (block.type === 'tool_use' ? [{ id: block.id, type: 'function' as const, function: { name: block.name, arguments: JSON.stringify(block.input) } }] : []))
  if (text === '' && toolCalls.length === 0) return []
  const message: AssistantMessage = { id: turn.id, role: 'assistant', ...(text === '' ? {} : { content: text }), ...(toolCalls.length === 0 ? {} : { toolCalls }) }
  return [message]
}

function userMessages(turn: SnapshotTurn): Message[] {
  const text = textOf(turn.content)
  const results: Message[] = turn.content.flatMap(block => {
    if (block.type !== 'tool_result') return []
    const content = typeof block.content === 'string' ? block.content : textOf(block.content)
    return [{ id: `${turn.id}:${block.toolUseId}`, role: 'tool' as const, toolCallId: block.toolUseId, content, ...(block.isError === true ? { error: content } : {}) }]
  })
  return text === '' ? results : [...results, { id: turn.id, role: 'user', content: text }]
}

function textOf(content: readonly ContentBlock[]): string {
  return content.flatMap(block => (block.type === 'text' ? [block.text] : [])).join('')
}

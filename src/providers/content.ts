import type { JsonObject } from '../json'

/** Plain text written by the user or the model. */
export interface TextBlock { type: 'text'; text: string }

/** The model's visible reasoning; `signature` must be sent back unchanged on later turns. */
export interface ThinkingBlock { type: 'thinking'; thinking: string; signature?: string }

/** Reasoning the provider encrypted; sent back as is. */
export interface RedactedThinkingBlock { type: 'redacted_thinking'; data: string }

/** The model asks to call a tool. */
export interface ToolUseBlock { type: 'tool_use'; id: string; name: string; input: JsonObject }

/** An image a tool returned, base64-encoded. */
export interface ImageBlock { type: 'image'; mediaType: string; data: string }

/** One block of a tool's result. */
export type ToolResultContent = TextBlock | ImageBlock

/** The result of one tool call, sent back to the model in a user turn. */
export interface ToolResultBlock {
  type: 'tool_result'
  toolUseId: string
  content: string | ToolResultContent[]
  isError?: boolean
}

/** Any block of a message. */
export type ContentBlock = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | ToolResultBlock | ImageBlock

/** Who wrote a message. */
export type Role = 'user' | 'assistant'

/** One message of the conversation sent to a provider. */
export interface Message { role: Role; content: ContentBlock[] }

/** Token counts of one model response (or a sum of them). Cache writes are split by lifetime when the provider reports it. */
export interface Usage {
  inputTokens: number
  outputTokens: number
  cacheReadTokens: number
  cacheWriteTokens: number
  cacheWrite5mTokens?: number
  cacheWrite1hTokens?: number
}

/** A usage with every count at zero. */
export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }
}

/** Adds two usages, keeping the optional cache-lifetime split when either side has it. */
export function addUsage(left: Usage, right: Usage): Usage {
  const sum: Usage = {
    inputTokens: left.inputTokens + right.inputTokens,
    outputTokens: left.outputTokens + right.outputTokens,
    cacheReadTokens: left.cacheReadTokens + right.cacheReadTokens,
    cacheWriteTokens: left.cacheWriteTokens + right.cacheWriteTokens,
  }
  if (left.cacheWrite5mTokens !== undefined || right.cacheWrite5mTokens !== undefined) sum.cacheWrite5mTokens = (left.cacheWrite5mTokens ?? 0) + (right.cacheWrite5mTokens ?? 0)
  if (left.cacheWrite1hTokens !== undefined || right.cacheWrite1hTokens !== undefined) sum.cacheWrite1hTokens = (left.cacheWrite1hTokens ?? 0) + (right.cacheWrite1hTokens ?? 0)
  return sum
}

/** The text blocks of a content list, joined. */
export function textOf(content: readonly ContentBlock[]): string {
  return content.filter((block): block is TextBlock => block.type === 'text').map(block => block.text).join('')
}

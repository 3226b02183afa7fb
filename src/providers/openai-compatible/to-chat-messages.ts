import type {
  ChatCompletionAssistantMessageParam, ChatCompletionContentPart, ChatCompletionMessageFunctionToolCall, ChatCompletionMessageParam, ChatCompletionTool,
} from 'openai/resources/chat/completions'
import type { ContentBlock, ImageBlock, Message, ToolResultBlock } from '../content'
import type { ToolSpec } from '../provider'

/** How {@link toChatMessages} treats reasoning: sent back as `reasoning_content` on assistant messages, or left out. */
export interface ChatHistoryOptions {
  sendReasoning: boolean
}

function imagePart(block: ImageBlock): ChatCompletionContentPart {
  return { type: 'image_url', image_url: { url: `data:${block.mediaType};base64,${block.data}` } }
}

/** A tool result's text; its images travel in a user message right after the tool messages (tool messages carry text only). */
function toolMessage(block: ToolResultBlock): ChatCompletionMessageParam {
  const text = typeof block.content === 'string' ? block.content : block.content.map(part => part.type === 'text' ? part.text : `[image ${part.mediaType} below]`).join('\n')
  return { role: 'tool', tool_call_id: block.toolUseId, content: block.isError === true ? `Error: ${text}` : text }
}

function resultImages(block: ToolResultBlock): ImageBlock[] {
  return typeof block.content === 'string' ? [] : block.content.filter((part): part is ImageBlock => part.type === 'image')
}

/** A user turn: its tool results first (they must follow the assistant's calls), then its text and images. */
function userMessages(content: readonly ContentBlock[]): ChatCompletionMessageParam[] {
  const results = content.filter((block): block is ToolResultBlock => block.type === 'tool_result')
  const parts: ChatCompletionContentPart[] = []
  for (const block of content) {
    if (block.type === 'text' && block.text !== '') parts.push({ type: 'text', text: block.text })
    if (block.type === 'image') parts.push(imagePart(block))
  }
  for (const image of results.flatMap(resultImages)) parts.push(imagePart(image))
  const user: ChatCompletionMessageParam[] = parts.length === 0 ? [] : [{ role: 'user', content: onlyText(parts) ?? parts }]
  return [...results.map(toolMessage), ...user]
}

function onlyText(parts: readonly ChatCompletionContentPart[]): string | undefined {
  return parts.every(part => part.type === 'text') ? parts.map(part => part.text).join('\n') : undefined
}

function toolCall(block: Extract<ContentBlock, { type: 'tool_use' }>): ChatCompletionMessageFunctionToolCall {
  return { id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input) } }
}

/**
 * An assistant turn. Signed thinking and redacted thinking belong to Anthropic and are never sent here; unsigned
 * thinking (an OpenAI-compatible model's own reasoning) goes back as `reasoning_content` when asked. An assistant turn
 * left with nothing is dropped.
 */
function assistantMessages(content: readonly ContentBlock[], options: ChatHistoryOptions): ChatCompletionMessageParam[] {
  const text = content.filter(block => block.type === 'text').map(block => block.text).join('')
  const calls = content.filter(block => block.type === 'tool_use').map(toolCall)
  const reasoning = content.filter(block => block.type === 'thinking' && block.signature === undefined).map(block => block.type === 'thinking' ? block.thinking : '').join('')
  if (text === '' && calls.length === 0) return []
  const message: ChatCompletionAssistantMessageParam & { reasoning_content?: string } = { role: 'assistant', content: text === '' ? null : text }
  if (calls.length > 0) message.tool_calls = calls
  if (options.sendReasoning && reasoning !== '') message.reasoning_content = reasoning
  return [message]
}

/** Our system prompt and messages as Chat Completions messages. */
export function toChatMessages(system: string | undefined, messages: readonly Message[], options: ChatHistoryOptions): ChatCompletionMessageParam[] {
  const head: ChatCompletionMessageParam[] = system === undefined || system === '' ? [] : [{ role: 'system', content: system }]
  return [...head, ...messages.flatMap(message => message.role === 'user' ? userMessages(message.content) : assistantMessages(message.content, options))]
}

/** Our tool specs as function tools. */
export function toChatTools(tools: readonly ToolSpec[]): ChatCompletionTool[] {
  return tools.map(tool => ({ type: 'function', function: { name: tool.name, description: tool.description, parameters: { ...tool.inputSchema, type: 'object' } } }))
}

import type { ContentBlockParam, ImageBlockParam, MessageParam, Tool, ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages'
import { ProviderError } from '../../errors/zidane-error'
import type { ContentBlock, ImageBlock, Message, ToolResultBlock, ToolResultContent } from '../content'
import type { ToolSpec } from '../provider'

type ImageMediaType = 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp'

const imageMediaTypes: ReadonlySet<string> = new Set<ImageMediaType>(['image/jpeg', 'image/png', 'image/gif', 'image/webp'])

function isImageMediaType(mediaType: string): mediaType is ImageMediaType {
  return imageMediaTypes.has(mediaType)
}

function toWireImage(block: ImageBlock): ImageBlockParam {
  if (!isImageMediaType(block.mediaType)) {
    throw new ProviderError(`Anthropic accepts jpeg, png, gif and webp images, not ${block.mediaType}`, { code: 'provider_unsupported_content' })
  }
  return { type: 'image', source: { type: 'base64', media_type: block.mediaType, data: block.data } }
}

function toWireToolResultContent(content: string | ToolResultContent[]): NonNullable<ToolResultBlockParam['content']> {
  if (typeof content === 'string') return content
  return content.map(block => block.type === 'text' ? { type: 'text', text: block.text } : toWireImage(block))
}

/**
 * A tool call id as the API accepts it (`^[a-zA-Z0-9_-]+$`). Ids another provider wrote (`call_x.1`, `fc:7`) are
 * mapped the same way in a call and in its result, so the pair still matches.
 */
export function toWireToolId(id: string): string {
  return id === '' ? '_' : id.replace(/[^a-zA-Z0-9_-]/g, '_')
}

function toWireToolResult(block: ToolResultBlock): ToolResultBlockParam {
  const result: ToolResultBlockParam = { type: 'tool_result', tool_use_id: toWireToolId(block.toolUseId), content: toWireToolResultContent(block.content) }
  if (block.isError === true) result.is_error = true
  return result
}

/**
 * One of our blocks in wire form. A thinking block without a signature is dropped (returns undefined): the API
 * rejects unsigned thinking, and such a block can only come from another provider or a cut stream.
 */
export function toWireBlock(block: ContentBlock): ContentBlockParam | undefined {
  switch (block.type) {
    case 'text': return { type: 'text', text: block.text }
    case 'thinking': return block.signature === undefined ? undefined : { type: 'thinking', thinking: block.thinking, signature: block.signature }
    case 'redacted_thinking': return { type: 'redacted_thinking', data: block.data }
    case 'tool_use': return { type: 'tool_use', id: toWireToolId(block.id), name: block.name, input: block.input }
    case 'tool_result': return toWireToolResult(block)
    case 'image': return toWireImage(block)
  }
}

/** Our messages in wire form; content is always an array of blocks so cache breakpoints can be placed on it. */
export function toWireMessages(messages: readonly Message[]): MessageParam[] {
  return messages.map(message => ({
    role: message.role,
    content: message.content.map(toWireBlock).filter((block): block is ContentBlockParam => block !== undefined),
  }))
}

/** Our tool specs as custom tools. */
export function toWireTools(tools: readonly ToolSpec[]): Tool[] {
  return tools.map(tool => ({ name: tool.name, description: tool.description, input_schema: { ...tool.inputSchema, type: 'object' } }))
}

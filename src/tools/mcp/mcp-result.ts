import type { ToolResultContent } from '../../providers/content'
import type { ToolResult } from '../tool'

/** The parts of an MCP `tools/call` result the mapping reads (the SDK's `CallToolResult`, loosely typed). */
export interface McpCallResult {
  content?: unknown[]
  structuredContent?: unknown
  isError?: boolean
}

interface McpBlock {
  type?: string
  text?: string
  data?: string
  mimeType?: string
  uri?: string
  name?: string
  resource?: { uri?: string; mimeType?: string; text?: string; blob?: string }
}

/**
 * An MCP tool result as a tool result: text blocks as text, images as image blocks, embedded resources as their text
 * (or as an image when they are one), links to resources and audio as a line of text naming them; structured content
 * as JSON text when there is no content. A single text block becomes a plain string. `isError` is kept.
 */
export function mcpResultToToolResult(result: McpCallResult): ToolResult {
  const blocks = (result.content ?? []).flatMap(block => mapBlock(block as McpBlock))
  if (blocks.length === 0 && result.structuredContent !== undefined) blocks.push({ type: 'text', text: JSON.stringify(result.structuredContent) })
  const only = blocks.length === 1 ? blocks[0] : undefined
  const content = blocks.length === 0 ? '' : only?.type === 'text' ? only.text : blocks
  return result.isError ? { content, isError: true } : { content }
}

function mapBlock(block: McpBlock): ToolResultContent[] {
  switch (block.type) {
    case 'text': return [{ type: 'text', text: block.text ?? '' }]
    case 'image': return [{ type: 'image', mediaType: block.mimeType ?? 'image/png', data: block.data ?? '' }]
    case 'audio': return [{ type: 'text', text: `[audio ${block.mimeType ?? ''}: ${approximateBytes(block.data)} bytes, not shown]` }]
    case 'resource_link': return [{ type: 'text', text: `[resource ${block.name ?? ''} ${block.uri ?? ''}${block.mimeType ? ` (${block.mimeType})` : ''}]` }]
    case 'resource': return mapResource(block.resource ?? {})
    default: return [{ type: 'text', text: `[${block.type ?? 'unknown'} content, not shown]` }]
  }
}

function mapResource(resource: NonNullable<McpBlock['resource']>): ToolResultContent[] {
  const label = `resource ${resource.uri ?? ''}${resource.mimeType ? ` (${resource.mimeType})` : ''}`
  if (resource.text !== undefined) return [{ type: 'text', text: `[${label}]\n${resource.text}` }]
  if (resource.blob !== undefined && resource.mimeType?.startsWith('image/')) return [{ type: 'text', text: `[${label}]` }, { type: 'image', mediaType: resource.mimeType, data: resource.blob }]
  return [{ type: 'text', text: `[${label}: ${approximateBytes(resource.blob)} bytes of binary content, not shown]` }]
}

function approximateBytes(base64: string | undefined): number {
  return Math.floor(((base64 ?? '').length * 3) / 4)
}

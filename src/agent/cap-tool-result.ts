import type { ToolResultContent } from '../providers/content'
import type { ToolResult } from '../tools/tool'

/** Cuts a text to at most `maxBytes` (UTF-8), keeping its head and tail around a note that says how much was left out. */
export function capText(text: string, maxBytes: number): string {
  const size = Buffer.byteLength(text)
  if (size <= maxBytes) return text
  const buffer = Buffer.from(text)
  const half = Math.max(0, Math.floor((maxBytes - 200) / 2))
  const head = buffer.subarray(0, half).toString('utf8').replace(/\uFFFD+$/, '')
  const tail = buffer.subarray(size - half).toString('utf8').replace(/^\uFFFD+/, '')
  return `${head}\n[… ${size - 2 * half} bytes of this ${size}-byte output were left out: it is over the ${maxBytes}-byte journal limit of this runtime; set behavior.persistDir to keep whole outputs in files …]\n${tail}`
}

/** Caps every text block and image of a tool result to `maxBytes` so the journaled step stays within its limit. */
export function capToolResult(result: ToolResult, maxBytes: number | undefined): ToolResult {
  if (maxBytes === undefined) return result
  if (typeof result.content === 'string') return Buffer.byteLength(result.content) <= maxBytes ? result : { ...result, content: capText(result.content, maxBytes) }
  const perBlock = Math.max(1024, Math.floor(maxBytes / Math.max(1, result.content.length)))
  return { ...result, content: result.content.map(block => capBlock(block, perBlock)) }
}

function capBlock(block: ToolResultContent, maxBytes: number): ToolResultContent {
  if (block.type === 'text') return { type: 'text', text: capText(block.text, maxBytes) }
  if (block.data.length <= maxBytes) return block
  return { type: 'text', text: `[An image of ${block.data.length} base64 bytes was left out: it is over the ${maxBytes}-byte journal limit of this runtime.]` }
}

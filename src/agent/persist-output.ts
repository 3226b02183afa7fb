import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ToolResultContent } from '../providers/content'
import type { ToolResult } from '../tools/tool'

/** Tool outputs larger than this go to a file when `behavior.persistDir` is set. */
export const PERSIST_OUTPUT_THRESHOLD_BYTES = 256 * 1024

/**
 * Moves an output over 256 KiB to `<persistDir>/<sessionId>/tool-results/<callId>.txt` and returns a result that
 * points at it with a preview; smaller outputs and runs without `persistDir` are returned unchanged. Content blocks
 * are measured as JSON: their text goes to the `.txt` file, and when they hold images the whole output also goes to
 * `<callId>.json` (the model gets the pointer, not the images).
 */
export async function persistLargeOutput(result: ToolResult, persistDir: string | undefined, sessionId: string, callId: string): Promise<ToolResult> {
  if (persistDir === undefined) return result
  const size = Buffer.byteLength(typeof result.content === 'string' ? result.content : JSON.stringify(result.content))
  if (size <= PERSIST_OUTPUT_THRESHOLD_BYTES) return result
  const directory = join(persistDir, safeName(sessionId), 'tool-results')
  await mkdir(directory, { recursive: true })
  const text = typeof result.content === 'string' ? result.content : textOf(result.content)
  const path = join(directory, `${safeName(callId)}.txt`)
  await writeFile(path, text)
  const blocksPath = typeof result.content === 'string' || result.content.every(block => block.type === 'text') ? undefined : join(directory, `${safeName(callId)}.json`)
  if (blocksPath !== undefined) await writeFile(blocksPath, JSON.stringify(result.content))
  const where = blocksPath === undefined ? path : `${path} (every block, images included: ${blocksPath})`
  const content = `[Output of ${size} bytes persisted to ${where}]\n${text.slice(0, 2000)}\n[… truncated; read the file for the rest]`
  return { ...result, content }
}

/** The text blocks of an output, one after the other. */
function textOf(blocks: readonly ToolResultContent[]): string {
  return blocks.flatMap(block => block.type === 'text' ? [block.text] : []).join('\n')
}

function safeName(value: string): string {
  return value.replace(/[^A-Za-z0-9_.-]/g, '_')
}

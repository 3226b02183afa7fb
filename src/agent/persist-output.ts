import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ToolResult } from '../tools/tool'

/** Tool outputs larger than this go to a file when `behavior.persistDir` is set. */
export const PERSIST_OUTPUT_THRESHOLD_BYTES = 256 * 1024

/**
 * Moves a text output over 256 KiB to `<persistDir>/<sessionId>/tool-results/<callId>.txt` and returns a result
 * that points at it with a preview; smaller outputs and runs without `persistDir` are returned unchanged.
 */
export async function persistLargeOutput(result: ToolResult, persistDir: string | undefined, sessionId: string, callId: string): Promise<ToolResult> {
  if (persistDir === undefined || typeof result.content !== 'string') return result
  const size = Buffer.byteLength(result.content)
  if (size <= PERSIST_OUTPUT_THRESHOLD_BYTES) return result
  const directory = join(persistDir, safeName(sessionId), 'tool-results')
  await mkdir(directory, { recursive: true })
  const path = join(directory, `${safeName(callId)}.txt`)
  await writeFile(path, result.content)
  const preview = result.content.slice(0, 2000)
  const content = `[Output of ${size} bytes persisted to ${path}]\n${preview}\n[… truncated; read the file for the rest]`
  return { ...result, content }
}

function safeName(value: string): string {
  return value.replace(/[^A-Za-z0-9_.-]/g, '_')
}

import { mkdir, open } from 'node:fs/promises'
import type { FileHandle } from 'node:fs/promises'
import { join } from 'node:path'
import type { ToolResultContent } from '../providers/content'
import type { ToolResult } from '../tools/tool'

/** Tool outputs larger than this go to a file when `behavior.persistDir` is set. */
export const PERSIST_OUTPUT_THRESHOLD_BYTES = 256 * 1024

const utf8 = new TextEncoder()
const PIECE_BYTES = 1024 * 1024
/** Encoding buffers not in use, a pair per output written at once; at most `SPARE_PAIRS` are kept for the next. */
const sparePieces: Array<[Buffer, Buffer]> = []
const SPARE_PAIRS = 2

/**
 * Moves an output over 256 KiB to `<persistDir>/<sessionId>/tool-results/<callId>.txt` and returns a result that
 * points at it with a preview; smaller outputs and runs without `persistDir` are returned unchanged. Content blocks
 * are measured as JSON: their text goes to the `.txt` file, and when they hold images the whole output also goes to
 * `<callId>.json` (the model gets the pointer, not the images). The files are written before this resolves, so the
 * step that records the pointer commits after them: a process crash never leaves a pointer to a missing or partial
 * file. They are not synced: after an OS crash a committed pointer may name a file that lost its tail (an fsync of
 * 5 MB costs about 4 ms more on the bench machine).
 */
export async function persistLargeOutput(result: ToolResult, persistDir: string | undefined, sessionId: string, callId: string): Promise<ToolResult> {
  if (persistDir === undefined) return result
  const output = result.content
  const measured = typeof output === 'string' ? output : JSON.stringify(output)
  if (!isOverThreshold(measured)) return result
  const directory = join(persistDir, safeName(sessionId), 'tool-results')
  const text = typeof output === 'string' ? output : textOf(output)
  const path = join(directory, `${safeName(callId)}.txt`)
  const textBytes = await writeTextFile(directory, path, text)
  const blocksPath = typeof output === 'string' || output.every(block => block.type === 'text') ? undefined : join(directory, `${safeName(callId)}.json`)
  if (blocksPath !== undefined) await writeTextFile(directory, blocksPath, measured)
  const size = typeof output === 'string' ? textBytes : Buffer.byteLength(measured)
  const where = blocksPath === undefined ? path : `${path} (every block, images included: ${blocksPath})`
  const content = `[Output of ${size} bytes persisted to ${where}]\n${text.slice(0, 2000)}\n[… truncated; read the file for the rest]`
  return { ...result, content }
}

/**
 * Whether `text` is over the threshold in UTF-8. A UTF-16 code unit takes 1 to 3 bytes, so the length alone decides
 * outside (threshold / 3, threshold]: a large output is not scanned here, only encoded once when it is written.
 */
function isOverThreshold(text: string): boolean {
  if (text.length > PERSIST_OUTPUT_THRESHOLD_BYTES) return true
  if (text.length * 3 <= PERSIST_OUTPUT_THRESHOLD_BYTES) return false
  return Buffer.byteLength(text) > PERSIST_OUTPUT_THRESHOLD_BYTES
}

/**
 * Writes `text` as UTF-8 to a new file `path` in `directory` (created if missing) and returns its size in bytes. The
 * directory and the file are made while the first piece is encoded; see `writePieces`.
 */
async function writeTextFile(directory: string, path: string, text: string): Promise<number> {
  const file = mkdir(directory, { recursive: true }).then(() => open(path, 'w'))
  try {
    return await writePieces(file, text)
  } finally {
    await file.then(async handle => { await handle.close() }, () => undefined)
  }
}

/**
 * Encodes `text` a piece at a time into two reused 1 MiB buffers, one encoded while the other is written: a fresh
 * buffer the size of the output would cost its page faults and, being external memory, a mark-compact every few
 * outputs, more than the encoding itself. `encodeInto` stops before a character that does not fit, so no piece
 * splits one.
 */
async function writePieces(opening: Promise<FileHandle>, text: string): Promise<number> {
  const pieces = sparePieces.pop() ?? [Buffer.allocUnsafeSlow(PIECE_BYTES), Buffer.allocUnsafeSlow(PIECE_BYTES)]
  let [piece, next] = pieces
  let writing: Promise<unknown> = opening
  let size = 0
  try {
    for (let offset = 0; offset < text.length; [piece, next] = [next, piece]) {
      const { read, written } = utf8.encodeInto(offset === 0 ? text : text.slice(offset), piece)
      await writing
      writing = writeAll(await opening, piece, written)
      offset += read
      size += written
    }
    await writing
  } finally {
    if (sparePieces.length < SPARE_PAIRS) sparePieces.push(pieces)
  }
  return size
}

async function writeAll(file: FileHandle, piece: Buffer, length: number): Promise<void> {
  for (let done = 0; done < length;) done += (await file.write(piece, done, length - done)).bytesWritten
}

/** The text blocks of an output, one after the other. */
function textOf(blocks: readonly ToolResultContent[]): string {
  return blocks.flatMap(block => block.type === 'text' ? [block.text] : []).join('\n')
}

function safeName(value: string): string {
  return value.replace(/[^A-Za-z0-9_.-]/g, '_')
}

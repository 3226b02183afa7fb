import { constants } from 'node:fs'
import { lstat, mkdir, open } from 'node:fs/promises'
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
 * Keeps one large output where the model can read it: writes `content` as the file `name` (`<callId>.txt`,
 * `<callId>.json`) and returns the path to show the model and the file's size in bytes. The services write into the session's workspace through
 * its sandboxed file worker, never following a link the tenant planted.
 */
export type OutputWriter = (name: string, content: string) => Promise<{ path: string; bytes: number }>

/**
 * Moves an output over 256 KiB to `<persistDir>/<sessionId>/tool-results/<callId>.txt` (or through `target` when it
 * is an {@link OutputWriter}) and returns a result that
 * points at it with a preview; smaller outputs and runs without `persistDir` are returned unchanged. Content blocks
 * are measured as JSON: their text goes to the `.txt` file, and when they hold images the whole output also goes to
 * `<callId>.json` (the model gets the pointer, not the images). The files are written before this resolves, so the
 * step that records the pointer commits after them: a process crash never leaves a pointer to a missing or partial
 * file. They are not synced: after an OS crash a committed pointer may name a file that lost its tail (an fsync of
 * 5 MB costs about 4 ms more on the bench machine).
 */
export async function persistLargeOutput(result: ToolResult, target: string | OutputWriter | undefined, sessionId: string, callId: string): Promise<ToolResult> {
  if (target === undefined) return result
  const output = result.content
  const measured = typeof output === 'string' ? output : JSON.stringify(output)
  if (!isOverThreshold(measured)) return result
  const write = typeof target === 'string' ? folderWriter(join(target, safeName(sessionId), 'tool-results')) : target
  const text = typeof output === 'string' ? output : textOf(output)
  const { path, bytes: textBytes } = await write(`${safeName(callId)}.txt`, text)
  const withImages = typeof output !== 'string' && output.some(block => block.type !== 'text')
  const blocksPath = withImages ? (await write(`${safeName(callId)}.json`, measured)).path : undefined
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

/** An {@link OutputWriter} into `directory` (created when missing), returning the file's path. */
function folderWriter(directory: string): OutputWriter {
  return async (name, content) => {
    const path = join(directory, name)
    return { path, bytes: await writeTextFile(directory, path, content) }
  }
}

/** Flags of a persisted file: a link planted in its place is not followed, a FIFO does not block the write. */
const NEW_FILE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK

/**
 * Writes `text` as UTF-8 to a new file `path` in `directory` (created if missing, refused when it is a link) and
 * returns its size in bytes. The directory and the file are made while the first piece is encoded; see `writePieces`.
 */
async function writeTextFile(directory: string, path: string, text: string): Promise<number> {
  const file = mkdir(directory, { recursive: true, mode: 0o700 }).then(() => assertRealFolder(directory)).then(() => open(path, NEW_FILE_FLAGS, 0o600)).then(assertRegularFile)
  try {
    return await writePieces(file, text)
  } finally {
    await file.then(async handle => { await handle.close() }, () => undefined)
  }
}

async function assertRealFolder(directory: string): Promise<void> {
  if (!(await lstat(directory)).isDirectory()) throw new Error(`${directory} is not a folder (a link or a file is in its place)`)
}

async function assertRegularFile(handle: FileHandle): Promise<FileHandle> {
  if ((await handle.stat()).isFile()) return handle
  await handle.close()
  throw new Error('a persisted output must be a regular file')
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

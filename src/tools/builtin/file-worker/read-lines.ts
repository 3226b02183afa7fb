import type { WorkerFileHandle as FileHandle } from './sync-fs.ts'

/** Which lines to return and how much of them. */
export interface LineWindow {
  /** First line returned (1-based). */
  offset: number
  /** Most lines returned. */
  limit: number
  /** Characters kept of a longer line, which is cut and says so. */
  maxLineChars: number
  /** Most bytes of formatted output. */
  maxOutputBytes: number
}

/** The formatted lines of a window, the number of lines seen, and why the window stopped early (if it did). */
export interface LineWindowResult {
  lines: string[]
  linesSeen: number
  next?: { reason: 'limit' | 'bytes'; offset: number }
}

const CHUNK_BYTES = 1024 * 1024

/**
 * Reads `<line number>\t<text>` lines from `handle` a chunk at a time. Memory stays bounded whatever the file holds:
 * a line keeps at most `4 × maxLineChars` bytes (a UTF-8 character has at most 4), the rest of it is skipped, and a
 * file without a newline is one cut line, not a string the size of the file.
 */
export async function readLineWindow(handle: FileHandle, window: LineWindow): Promise<LineWindowResult> {
  const keepBytes = window.maxLineChars * 4
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES)
  const result: LineWindowResult = { lines: [], linesSeen: 0 }
  let pieces: Buffer[] = []
  let keptBytes = 0
  let cut = false
  let outputBytes = 0
  let pending = false
  const endLine = (): boolean => {
    result.linesSeen += 1
    const lineNumber = result.linesSeen
    const bytes = Buffer.concat(pieces)
    pieces = []
    keptBytes = 0
    const wasCut = cut
    cut = false
    pending = false
    if (lineNumber < window.offset) return true
    if (result.lines.length === window.limit) { result.next = { reason: 'limit', offset: lineNumber }; return false }
    const formatted = `${lineNumber}\t${lineText(bytes, wasCut, window.maxLineChars)}`
    outputBytes += Buffer.byteLength(formatted) + 1
    if (outputBytes > window.maxOutputBytes) { result.next = { reason: 'bytes', offset: lineNumber }; return false }
    result.lines.push(formatted)
    return true
  }
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, null)
    if (bytesRead === 0) break
    let start = 0
    while (start < bytesRead) {
      const newline = chunk.indexOf(10, start)
      const end = newline === -1 || newline >= bytesRead ? bytesRead : newline
      const room = keepBytes - keptBytes
      if (room > 0) { pieces.push(Buffer.from(chunk.subarray(start, Math.min(end, start + room)))); keptBytes += Math.min(end - start, room) }
      if (end - start > room) cut = true
      pending = true
      if (end === bytesRead) break
      if (!endLine()) return result
      start = end + 1
    }
  }
  if (pending) endLine()
  return result
}

function lineText(bytes: Buffer, wasCut: boolean, maxLineChars: number): string {
  const text = bytes.toString('utf8').replace(/\r$/, '')
  if (!wasCut && text.length <= maxLineChars) return text
  return `${text.slice(0, maxLineChars)}… [line cut at ${maxLineChars} characters]`
}

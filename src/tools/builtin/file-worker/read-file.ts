import { constants } from 'node:fs'
import type { WorkerFileHandle as FileHandle } from './sync-fs.ts'
import { FileToolFailure } from './file-tool-failure.ts'
import { READ_FILE_MAX_BYTES, READ_FILE_MAX_LINE_CHARS } from './limits.ts'
import { openRegular } from './open-regular.ts'
import { readLineWindow } from './read-lines.ts'
import { resolveInside } from './resolve-path.ts'

const BINARY_SNIFF_BYTES = 8192

/** `read_file`: numbered lines of a regular text file, from `offset` for `limit` lines, capped at 256 KiB. */
export async function readFile(root: string, userPath: string, offset: number, limit: number): Promise<string> {
  const file = await resolveInside(root, userPath)
  const handle = await openRegular(file, constants.O_RDONLY)
  try {
    if (await looksBinary(handle)) throw new FileToolFailure('binary_file', `${file.relative} looks like a binary file; read_file only returns text.`)
    const window = await readLineWindow(handle, { offset, limit, maxLineChars: READ_FILE_MAX_LINE_CHARS, maxOutputBytes: READ_FILE_MAX_BYTES })
    if (window.linesSeen === 0) return `(${file.relative} is empty)`
    if (window.lines.length === 0 && window.next === undefined) return `(${file.relative} has ${window.linesSeen} lines; offset ${offset} is past the end)`
    if (window.next === undefined) return window.lines.join('\n')
    const note = window.next.reason === 'limit' ? `[More lines follow. Continue with offset=${window.next.offset}.]` : `[Output capped at 256 KiB. Continue with offset=${window.next.offset}.]`
    return `${window.lines.join('\n')}\n${note}`
  } finally {
    await handle.close()
  }
}

/** True when the first 8 KiB hold a NUL byte, the usual mark of a binary file. */
export async function looksBinary(handle: FileHandle): Promise<boolean> {
  const buffer = Buffer.alloc(BINARY_SNIFF_BYTES)
  const { bytesRead } = await handle.read(buffer, 0, BINARY_SNIFF_BYTES, 0)
  return buffer.subarray(0, bytesRead).includes(0)
}

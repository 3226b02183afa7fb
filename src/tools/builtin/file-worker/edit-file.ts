import { constants } from 'node:fs'
import type { WorkerFileHandle as FileHandle } from './sync-fs.ts'
import { FileToolFailure, failureOf } from './file-tool-failure.ts'
import { EDIT_FILE_MAX_BYTES } from './limits.ts'
import { openRegular, readAtMost } from './open-regular.ts'
import { assertRoomFor } from './quota.ts'
import { resolveInside } from './resolve-path.ts'

/** What `edit_file` replaces. */
export interface Edit {
  oldText: string
  newText: string
  replaceAll: boolean
}

/**
 * `edit_file`: replaces the exact text `oldText` with `newText` in a regular file of at most 16 MiB, through the one
 * handle it read (the path is never opened twice).
 */
export async function editFile(root: string, userPath: string, edit: Edit, quotaBytes?: number): Promise<string> {
  if (edit.oldText === '') throw new FileToolFailure('invalid_input', 'oldText must not be empty.')
  const file = await resolveInside(root, userPath)
  const handle = await openRegular(file, constants.O_RDWR)
  try {
    const { size } = await handle.stat()
    if (size > EDIT_FILE_MAX_BYTES) throw new FileToolFailure('file_too_large', `${file.relative} is ${size} bytes; edit_file edits files up to ${EDIT_FILE_MAX_BYTES} bytes. Use shell for larger files.`)
    const bytes = await readAtMost(handle, EDIT_FILE_MAX_BYTES)
    if (bytes === null) throw new FileToolFailure('file_too_large', `${file.relative} grew past ${EDIT_FILE_MAX_BYTES} bytes while it was read; edit_file edits files up to ${EDIT_FILE_MAX_BYTES} bytes. Use shell for larger files.`)
    const content = bytes.toString('utf8')
    const count = countOccurrences(content, edit.oldText)
    if (count === 0) throw new FileToolFailure('old_text_not_found', `oldText was not found in ${file.relative}. Read the file and copy the text exactly, including whitespace.`)
    if (count > 1 && !edit.replaceAll) throw new FileToolFailure('old_text_ambiguous', `oldText occurs ${count} times in ${file.relative}. Add surrounding lines to make it unique, or set replaceAll to true.`)
    assertResultFits(file.relative, size, count, edit)
    const next = Buffer.from(content.split(edit.oldText).join(edit.newText), 'utf8')
    if (next.length > size) await assertRoomFor(root, quotaBytes, next.length - size)
    await handle.truncate(0).catch((error: unknown) => { throw failureOf(error, file.relative) })
    await writeAt(handle, next).catch((error: unknown) => { throw failureOf(error, file.relative) })
    return `Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${file.relative}.`
  } finally {
    await handle.close()
  }
}

/**
 * Refuses an edit whose result would pass the size `edit_file` handles, before building it: many occurrences times a
 * long `newText` would otherwise exhaust the worker's memory or V8's string length.
 */
function assertResultFits(relative: string, size: number, count: number, edit: Edit): void {
  const resultBytes = size + count * (Buffer.byteLength(edit.newText) - Buffer.byteLength(edit.oldText))
  if (resultBytes > EDIT_FILE_MAX_BYTES) throw new FileToolFailure('file_too_large', `Replacing ${count} occurrence${count === 1 ? '' : 's'} would make ${relative} ${resultBytes} bytes; edit_file writes files up to ${EDIT_FILE_MAX_BYTES} bytes. Use shell for larger files.`)
}

async function writeAt(handle: FileHandle, bytes: Buffer): Promise<void> {
  for (let done = 0; done < bytes.length;) done += (await handle.write(bytes, done, bytes.length - done, done)).bytesWritten
}

/** Counts non-overlapping occurrences of `needle` in `haystack`. */
function countOccurrences(haystack: string, needle: string): number {
  let count = 0
  for (let index = haystack.indexOf(needle); index !== -1; index = haystack.indexOf(needle, index + needle.length)) count += 1
  return count
}

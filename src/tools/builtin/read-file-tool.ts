import { createReadStream } from 'node:fs'
import { stat } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import type { ToolDef } from '../tool'
import { ToolError } from '../tool'
import { fileLooksBinary } from './binary-content'
import { withFsToolError } from './fs-tool-error'
import { optionalInteger, requiredString } from './tool-input'
import type { Workspace, WorkspacePath } from './workspace'

/** Most bytes of file text `read_file` returns in one call. */
export const READ_FILE_MAX_BYTES = 256 * 1024
/** Lines `read_file` returns when no `limit` is given. */
export const READ_FILE_DEFAULT_LIMIT = 2000
/** Longest line `read_file` returns; longer lines are cut. */
export const READ_FILE_MAX_LINE_CHARS = 2000

/**
 * The `read_file` tool: returns lines of a text file as `<line number><tab><text>` (numbers start at 1), from `offset`
 * for `limit` lines, capped at 256 KiB with a note telling the model which `offset` continues.
 */
export function readFileTool(workspace: Workspace): ToolDef {
  return {
    spec: {
      name: 'read_file',
      description: `Read a text file in the workspace. Each line is returned as "<line number>\\t<text>" (numbers start at 1). Use offset (first line, 1-based) and limit (number of lines, default ${READ_FILE_DEFAULT_LIMIT}) to page through large files; output is capped at 256 KiB.`,
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'File path, relative to the workspace root.' },
          offset: { type: 'integer', minimum: 1, description: 'First line to return (1-based). Default 1.' },
          limit: { type: 'integer', minimum: 1, description: `Number of lines to return. Default ${READ_FILE_DEFAULT_LIMIT}.` },
        },
        required: ['path'],
        additionalProperties: false,
      },
    },
    replay: 'safe',
    isConcurrencySafe: true,
    execute: async input => {
      const file = await workspace.resolve(requiredString(input, 'path'))
      const offset = optionalInteger(input, 'offset', 1) ?? 1
      const limit = optionalInteger(input, 'limit', 1) ?? READ_FILE_DEFAULT_LIMIT
      await assertTextFile(file)
      return readLines(file, offset, limit)
    },
  }
}

async function assertTextFile(file: WorkspacePath): Promise<void> {
  const stats = await withFsToolError(stat(file.absolute), file.relative)
  if (stats.isDirectory()) throw new ToolError(`${file.relative} is a directory, not a file; use list_files to see its entries.`, 'not_a_file')
  if (!stats.isFile()) throw new ToolError(`${file.relative} is not a regular file.`, 'not_a_file')
  if (await fileLooksBinary(file.absolute)) throw new ToolError(`${file.relative} looks like a binary file; read_file only returns text.`, 'binary_file')
}

async function readLines(file: WorkspacePath, offset: number, limit: number): Promise<string> {
  const stream = createReadStream(file.absolute, { encoding: 'utf8' })
  const lines = createInterface({ input: stream, crlfDelay: Infinity })
  const output: string[] = []
  let lineNumber = 0
  let bytes = 0
  let note = ''
  try {
    for await (const line of lines) {
      lineNumber += 1
      if (lineNumber < offset) continue
      if (output.length === limit) { note = `[More lines follow. Continue with offset=${lineNumber}.]`; break }
      const formatted = `${lineNumber}\t${clipLine(line)}`
      bytes += Buffer.byteLength(formatted) + 1
      if (bytes > READ_FILE_MAX_BYTES) { note = `[Output capped at 256 KiB. Continue with offset=${lineNumber}.]`; break }
      output.push(formatted)
    }
  } finally {
    lines.close()
    stream.destroy()
  }
  if (lineNumber === 0) return `(${file.relative} is empty)`
  if (output.length === 0 && note === '') return `(${file.relative} has ${lineNumber} lines; offset ${offset} is past the end)`
  return note === '' ? output.join('\n') : `${output.join('\n')}\n${note}`
}

function clipLine(line: string): string {
  return line.length <= READ_FILE_MAX_LINE_CHARS ? line : `${line.slice(0, READ_FILE_MAX_LINE_CHARS)}… [line cut at ${READ_FILE_MAX_LINE_CHARS} characters]`
}

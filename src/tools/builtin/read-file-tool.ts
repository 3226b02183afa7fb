import type { ToolDef } from '../tool'
import { READ_FILE_DEFAULT_LIMIT } from './file-worker/limits'
import { optionalInteger, requiredString } from './tool-input'
import type { Workspace } from './workspace'

export { READ_FILE_DEFAULT_LIMIT, READ_FILE_MAX_BYTES, READ_FILE_MAX_LINE_CHARS } from './file-worker/limits'

/** One schema object for every instance of the tool: input validation compiles it once, not once per run. */
const INPUT_SCHEMA: ToolDef['spec']['inputSchema'] = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'File path, relative to the workspace root.' },
    offset: { type: 'integer', minimum: 1, description: 'First line to return (1-based). Default 1.' },
    limit: { type: 'integer', minimum: 1, description: `Number of lines to return. Default ${READ_FILE_DEFAULT_LIMIT}.` },
  },
  required: ['path'],
  additionalProperties: false,
}

/**
 * The `read_file` tool: returns lines of a regular text file as `<line number><tab><text>` (numbers start at 1), from
 * `offset` for `limit` lines, capped at 256 KiB with a note telling the model which `offset` continues. A line over
 * 2,000 characters is cut and says so.
 */
export function readFileTool(workspace: Workspace): ToolDef {
  return {
    spec: {
      name: 'read_file',
      description: `Read a text file in the workspace. Each line is returned as "<line number>\\t<text>" (numbers start at 1). Use offset (first line, 1-based) and limit (number of lines, default ${READ_FILE_DEFAULT_LIMIT}) to page through large files; output is capped at 256 KiB and lines at 2000 characters.`,
      inputSchema: INPUT_SCHEMA,
    },
    replay: 'safe',
    isConcurrencySafe: true,
    usesToolState: false,
    execute: (input, ctx) => {
      const path = requiredString(input, 'path')
      const offset = optionalInteger(input, 'offset', 1) ?? 1
      const limit = optionalInteger(input, 'limit', 1) ?? READ_FILE_DEFAULT_LIMIT
      return workspace.run({ op: 'read', path, offset, limit }, ctx.signal)
    },
  }
}

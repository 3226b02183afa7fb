import type { ToolDef } from '../tool'
import { requiredString } from './tool-input'
import type { Workspace } from './workspace'

/** One schema object for every instance of the tool: input validation compiles it once, not once per run. */
const INPUT_SCHEMA: ToolDef['spec']['inputSchema'] = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'File path, relative to the workspace root.' },
    content: { type: 'string', description: 'The complete new content of the file.' },
  },
  required: ['path', 'content'],
  additionalProperties: false,
}

/**
 * The `write_file` tool: writes `content` to a regular file (UTF-8), replacing it if it exists and creating missing
 * parent directories. Links and every kind of file but a regular one are refused.
 */
export function writeFileTool(workspace: Workspace): ToolDef {
  return {
    spec: {
      name: 'write_file',
      description: 'Write a text file in the workspace, replacing its content if it exists. Missing parent directories are created.',
      inputSchema: INPUT_SCHEMA,
    },
    isConcurrencySafe: false,
    usesToolState: false,
    execute: (input, ctx) => workspace.run({ op: 'write', path: requiredString(input, 'path'), content: requiredString(input, 'content') }, ctx.signal),
  }
}

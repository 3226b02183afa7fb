import { mkdir, stat, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { ToolDef } from '../tool'
import { ToolError } from '../tool'
import { fsToolError } from './fs-tool-error'
import { requiredString } from './tool-input'
import type { Workspace } from './workspace'

/** The `write_file` tool: writes `content` to a file (UTF-8), replacing it if it exists and creating missing parent directories. */
export function writeFileTool(workspace: Workspace): ToolDef {
  return {
    spec: {
      name: 'write_file',
      description: 'Write a text file in the workspace, replacing its content if it exists. Missing parent directories are created.',
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'File path, relative to the workspace root.' },
          content: { type: 'string', description: 'The complete new content of the file.' },
        },
        required: ['path', 'content'],
        additionalProperties: false,
      },
    },
    isConcurrencySafe: false,
    execute: async input => {
      const file = await workspace.resolve(requiredString(input, 'path'))
      const content = requiredString(input, 'content')
      const existing = await stat(file.absolute).catch(() => null)
      if (existing?.isDirectory() === true) throw new ToolError(`${file.relative} is a directory; cannot write a file there.`, 'not_a_file')
      try {
        await mkdir(path.dirname(file.absolute), { recursive: true })
        await writeFile(file.absolute, content, 'utf8')
      } catch (error) {
        throw fsToolError(error, file.relative)
      }
      return `Wrote ${Buffer.byteLength(content)} bytes to ${file.relative}.`
    },
  }
}

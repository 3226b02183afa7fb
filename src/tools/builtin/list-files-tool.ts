import { readdir } from 'node:fs/promises'
import type { Dirent } from 'node:fs'
import type { ToolDef } from '../tool'
import { withFsToolError } from './fs-tool-error'
import { optionalString } from './tool-input'
import type { Workspace } from './workspace'

/** Most entries `list_files` returns. */
export const LIST_FILES_MAX_ENTRIES = 1000

/**
 * The `list_files` tool: the entries of one directory (not recursive), sorted, one per line; directories end with `/`
 * and symbolic links with `@`.
 */
export function listFilesTool(workspace: Workspace): ToolDef {
  return {
    spec: {
      name: 'list_files',
      description: 'List the entries of a directory in the workspace (not recursive). Directories end with "/", symbolic links with "@". Defaults to the workspace root.',
      inputSchema: {
        type: 'object',
        properties: { path: { type: 'string', description: 'Directory path, relative to the workspace root. Default ".".' } },
        required: [],
        additionalProperties: false,
      },
    },
    replay: 'safe',
    isConcurrencySafe: true,
    execute: async input => {
      const directory = await workspace.resolve(optionalString(input, 'path') ?? '.')
      const entries = await withFsToolError(readdir(directory.absolute, { withFileTypes: true }), directory.relative)
      if (entries.length === 0) return `(${directory.relative} is empty)`
      const names = entries.map(formatEntry).sort()
      if (names.length <= LIST_FILES_MAX_ENTRIES) return names.join('\n')
      return `${names.slice(0, LIST_FILES_MAX_ENTRIES).join('\n')}\n[${names.length - LIST_FILES_MAX_ENTRIES} more entries not shown. Use glob to narrow down.]`
    },
  }
}

function formatEntry(entry: Dirent): string {
  if (entry.isDirectory()) return `${entry.name}/`
  if (entry.isSymbolicLink()) return `${entry.name}@`
  return entry.name
}

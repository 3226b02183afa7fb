import { readFile, writeFile } from 'node:fs/promises'
import type { ToolDef } from '../tool'
import { ToolError } from '../tool'
import { withFsToolError } from './fs-tool-error'
import { optionalBoolean, requiredString } from './tool-input'
import type { Workspace } from './workspace'

/**
 * The `edit_file` tool: replaces the exact text `oldText` with `newText`. Fails with `old_text_not_found` when it does
 * not occur and `old_text_ambiguous` when it occurs more than once without `replaceAll`.
 */
export function editFileTool(workspace: Workspace): ToolDef {
  return {
    spec: {
      name: 'edit_file',
      description: 'Replace exact text in a file. oldText must match exactly (whitespace included) and occur exactly once, unless replaceAll is true, which replaces every occurrence. Include enough surrounding lines to make oldText unique.',
      inputSchema: {
        type: 'object',
        properties: {
          path: { type: 'string', description: 'File path, relative to the workspace root.' },
          oldText: { type: 'string', minLength: 1, description: 'The exact text to replace.' },
          newText: { type: 'string', description: 'The replacement text.' },
          replaceAll: { type: 'boolean', description: 'Replace every occurrence instead of requiring exactly one. Default false.' },
        },
        required: ['path', 'oldText', 'newText'],
        additionalProperties: false,
      },
    },
    isConcurrencySafe: false,
    execute: async input => {
      const file = await workspace.resolve(requiredString(input, 'path'))
      const oldText = requiredString(input, 'oldText')
      const newText = requiredString(input, 'newText')
      if (oldText === '') throw new ToolError('oldText must not be empty.', 'invalid_input')
      const content = await withFsToolError(readFile(file.absolute, 'utf8'), file.relative)
      const count = countOccurrences(content, oldText)
      if (count === 0) throw new ToolError(`oldText was not found in ${file.relative}. Read the file and copy the text exactly, including whitespace.`, 'old_text_not_found')
      const replaceAll = optionalBoolean(input, 'replaceAll') ?? false
      if (count > 1 && !replaceAll) throw new ToolError(`oldText occurs ${count} times in ${file.relative}. Add surrounding lines to make it unique, or set replaceAll to true.`, 'old_text_ambiguous')
      await withFsToolError(writeFile(file.absolute, content.split(oldText).join(newText), 'utf8'), file.relative)
      return `Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${file.relative}.`
    },
  }
}

/** Counts non-overlapping occurrences of `needle` in `haystack`. */
function countOccurrences(haystack: string, needle: string): number {
  let count = 0
  for (let index = haystack.indexOf(needle); index !== -1; index = haystack.indexOf(needle, index + needle.length)) count += 1
  return count
}

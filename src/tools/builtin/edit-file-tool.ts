import type { ToolDef } from '../tool'
import { optionalBoolean, requiredString } from './tool-input'
import type { Workspace } from './workspace'

/** One schema object for every instance of the tool: input validation compiles it once, not once per run. */
const INPUT_SCHEMA: ToolDef['spec']['inputSchema'] = {
  type: 'object',
  properties: {
    path: { type: 'string', description: 'File path, relative to the workspace root.' },
    oldText: { type: 'string', minLength: 1, description: 'The exact text to replace.' },
    newText: { type: 'string', description: 'The replacement text.' },
    replaceAll: { type: 'boolean', description: 'Replace every occurrence instead of requiring exactly one. Default false.' },
  },
  required: ['path', 'oldText', 'newText'],
  additionalProperties: false,
}

/**
 * The `edit_file` tool: replaces the exact text `oldText` with `newText`. Fails with `old_text_not_found` when it does
 * not occur and `old_text_ambiguous` when it occurs more than once without `replaceAll`.
 */
export function editFileTool(workspace: Workspace): ToolDef {
  return {
    spec: {
      name: 'edit_file',
      description: 'Replace exact text in a file. oldText must match exactly (whitespace included) and occur exactly once, unless replaceAll is true, which replaces every occurrence. Include enough surrounding lines to make oldText unique.',
      inputSchema: INPUT_SCHEMA,
    },
    isConcurrencySafe: false,
    usesToolState: false,
    execute: (input, ctx) => {
      const edit = { path: requiredString(input, 'path'), oldText: requiredString(input, 'oldText'), newText: requiredString(input, 'newText'), replaceAll: optionalBoolean(input, 'replaceAll') ?? false }
      return workspace.run({ op: 'edit', ...edit }, ctx.signal)
    },
  }
}

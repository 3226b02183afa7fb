import type { ToolDef } from '../tool'
import { optionalString } from './tool-input'
import type { Workspace } from './workspace'

export { LIST_FILES_MAX_ENTRIES } from './file-worker/limits'

/** One schema object for every instance of the tool: input validation compiles it once, not once per run. */
const INPUT_SCHEMA: ToolDef['spec']['inputSchema'] = {
  type: 'object',
  properties: { path: { type: 'string', description: 'Directory path, relative to the workspace root. Default ".".' } },
  required: [],
  additionalProperties: false,
}

/**
 * The `list_files` tool: the entries of one directory (not recursive), sorted, one per line; directories end with `/`
 * and symbolic links with `@`.
 */
export function listFilesTool(workspace: Workspace): ToolDef {
  return {
    spec: {
      name: 'list_files',
      description: 'List the entries of a directory in the workspace (not recursive). Directories end with "/", symbolic links with "@". Defaults to the workspace root.',
      inputSchema: INPUT_SCHEMA,
    },
    replay: 'safe',
    isConcurrencySafe: true,
    usesToolState: false,
    execute: (input, ctx) => workspace.run({ op: 'list', path: optionalString(input, 'path') ?? '.' }, ctx.signal),
  }
}

import type { ToolDef } from '../tool'
import { optionalString, requiredString } from './tool-input'
import type { Workspace } from './workspace'

export { GLOB_MAX_RESULTS } from './file-worker/limits'

/** One schema object for every instance of the tool: input validation compiles it once, not once per run. */
const INPUT_SCHEMA: ToolDef['spec']['inputSchema'] = {
  type: 'object',
  properties: {
    pattern: { type: 'string', description: 'Glob pattern, e.g. "src/**/*.{ts,tsx}".' },
    path: { type: 'string', description: 'Directory to search in, relative to the workspace root. Default ".".' },
  },
  required: ['pattern'],
  additionalProperties: false,
}

/**
 * The `glob` tool: files under `path` (default the root) whose path relative to `path` matches `pattern`, one
 * workspace-relative path per line. `*.ts` matches only at the top level; use `**\/*.ts` to search every depth.
 */
export function globTool(workspace: Workspace): ToolDef {
  return {
    spec: {
      name: 'glob',
      description: 'Find files by glob pattern, matched against the path relative to "path" (default: workspace root). Supports *, ** (any depth), ? and {a,b}. "*.ts" matches only top-level files; use "**/*.ts" for every depth. Skips .git and node_modules; symbolic links are not followed.',
      inputSchema: INPUT_SCHEMA,
    },
    replay: 'safe',
    isConcurrencySafe: true,
    usesToolState: false,
    execute: (input, ctx) => workspace.run({ op: 'glob', pattern: requiredString(input, 'pattern'), path: optionalString(input, 'path') ?? '.' }, ctx.signal),
  }
}

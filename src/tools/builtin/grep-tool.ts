import type { ToolDef } from '../tool'
import { GREP_MAX_MATCHES } from './file-worker/limits'
import { optionalString, requiredString } from './tool-input'
import type { Workspace } from './workspace'

export { GREP_MAX_FILE_BYTES, GREP_MAX_MATCHES, GREP_MAX_OUTPUT_BYTES } from './file-worker/limits'

/** One schema object for every instance of the tool: input validation compiles it once, not once per run. */
const INPUT_SCHEMA: ToolDef['spec']['inputSchema'] = {
  type: 'object',
  properties: {
    pattern: { type: 'string', description: 'JavaScript regular expression, e.g. "function\\s+\\w+".' },
    path: { type: 'string', description: 'File or directory to search, relative to the workspace root. Default ".".' },
    glob: { type: 'string', description: 'Only search files matching this glob, e.g. "*.ts" or "src/**/*.ts".' },
  },
  required: ['pattern'],
  additionalProperties: false,
}

/**
 * The `grep` tool: lines matching a JavaScript regular expression, as `file:line: text`, in the file or directory
 * `path`, optionally only in files matching `glob`. Binary and very large files are skipped; output is capped. The
 * match runs in the file worker, with a linear-time engine for patterns that backtrack and a deadline for the rest.
 */
export function grepTool(workspace: Workspace): ToolDef {
  return {
    spec: {
      name: 'grep',
      description: `Search file contents with a JavaScript regular expression. Returns "file:line: text" lines (at most ${GREP_MAX_MATCHES}). "path" is a file or directory (default: workspace root); "glob" filters files (a pattern without "/" matches the file name at any depth, e.g. "*.ts"). Skips .git, node_modules, binary files and symbolic links.`,
      inputSchema: INPUT_SCHEMA,
    },
    replay: 'safe',
    isConcurrencySafe: true,
    usesToolState: false,
    execute: (input, ctx) => {
      const glob = optionalString(input, 'glob')
      const search = { pattern: requiredString(input, 'pattern'), path: optionalString(input, 'path') ?? '.' }
      return workspace.run({ op: 'grep', ...search, ...(glob === undefined ? {} : { glob }) }, ctx.signal)
    },
  }
}

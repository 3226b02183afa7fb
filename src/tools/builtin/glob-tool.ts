import { stat } from 'node:fs/promises'
import type { ToolDef } from '../tool'
import { ToolError } from '../tool'
import { compileGlob } from './compile-glob'
import { withFsToolError } from './fs-tool-error'
import { optionalString, requiredString } from './tool-input'
import { joinRelative, walkFiles } from './walk-files'
import type { Workspace } from './workspace'

/** Most paths `glob` returns. */
export const GLOB_MAX_RESULTS = 1000

/**
 * The `glob` tool: files under `path` (default the root) whose path relative to `path` matches `pattern`, one
 * workspace-relative path per line. `*.ts` matches only at the top level; use `**\/*.ts` to search every depth.
 */
export function globTool(workspace: Workspace): ToolDef {
  return {
    spec: {
      name: 'glob',
      description: 'Find files by glob pattern, matched against the path relative to "path" (default: workspace root). Supports *, ** (any depth), ? and {a,b}. "*.ts" matches only top-level files; use "**/*.ts" for every depth. Skips .git and node_modules; symbolic links are not followed.',
      inputSchema: {
        type: 'object',
        properties: {
          pattern: { type: 'string', description: 'Glob pattern, e.g. "src/**/*.{ts,tsx}".' },
          path: { type: 'string', description: 'Directory to search in, relative to the workspace root. Default ".".' },
        },
        required: ['pattern'],
        additionalProperties: false,
      },
    },
    replay: 'safe',
    isConcurrencySafe: true,
    execute: async input => {
      const matcher = compileGlob(requiredString(input, 'pattern'))
      const base = await workspace.resolve(optionalString(input, 'path') ?? '.')
      const stats = await withFsToolError(stat(base.absolute), base.relative)
      if (!stats.isDirectory()) throw new ToolError(`${base.relative} is not a directory.`, 'not_a_directory')
      const matches: string[] = []
      for await (const relative of walkFiles(base.absolute)) {
        if (!matcher.test(relative)) continue
        if (matches.length === GLOB_MAX_RESULTS) return `${matches.join('\n')}\n[More than ${GLOB_MAX_RESULTS} files match; narrow the pattern.]`
        matches.push(joinRelative(base.relative, relative))
      }
      return matches.length === 0 ? 'No files match.' : matches.join('\n')
    },
  }
}

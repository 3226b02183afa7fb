import { readFile, stat } from 'node:fs/promises'
import path from 'node:path'
import type { ToolDef } from '../tool'
import { ToolError } from '../tool'
import { looksBinary } from './binary-content'
import { compileGlob } from './compile-glob'
import { withFsToolError } from './fs-tool-error'
import { optionalString, requiredString } from './tool-input'
import { joinRelative, walkFiles } from './walk-files'
import type { Workspace, WorkspacePath } from './workspace'

/** Most matching lines `grep` returns. */
export const GREP_MAX_MATCHES = 500
/** Most bytes of output `grep` returns. */
export const GREP_MAX_OUTPUT_BYTES = 64 * 1024
/** Files larger than this are skipped by `grep`. */
export const GREP_MAX_FILE_BYTES = 4 * 1024 * 1024

const MAX_LINE_CHARS = 300

interface GrepTarget { file: string; absolute: string }

/**
 * The `grep` tool: lines matching a JavaScript regular expression, as `file:line: text`, in the file or directory
 * `path`, optionally only in files matching `glob`. Binary and very large files are skipped; output is capped.
 */
export function grepTool(workspace: Workspace): ToolDef {
  return {
    spec: {
      name: 'grep',
      description: `Search file contents with a JavaScript regular expression. Returns "file:line: text" lines (at most ${GREP_MAX_MATCHES}). "path" is a file or directory (default: workspace root); "glob" filters files (a pattern without "/" matches the file name at any depth, e.g. "*.ts"). Skips .git, node_modules, binary files and symbolic links.`,
      inputSchema: {
        type: 'object',
        properties: {
          pattern: { type: 'string', description: 'JavaScript regular expression, e.g. "function\\s+\\w+".' },
          path: { type: 'string', description: 'File or directory to search, relative to the workspace root. Default ".".' },
          glob: { type: 'string', description: 'Only search files matching this glob, e.g. "*.ts" or "src/**/*.ts".' },
        },
        required: ['pattern'],
        additionalProperties: false,
      },
    },
    replay: 'safe',
    isConcurrencySafe: true,
    execute: async input => {
      const regex = compileRegex(requiredString(input, 'pattern'))
      const glob = optionalString(input, 'glob')
      const base = await workspace.resolve(optionalString(input, 'path') ?? '.')
      return searchTargets(listTargets(base, glob), regex)
    },
  }
}

function compileRegex(pattern: string): RegExp {
  try {
    return new RegExp(pattern)
  } catch (error) {
    throw new ToolError(`Invalid regular expression: ${error instanceof Error ? error.message : String(error)}`, 'invalid_pattern')
  }
}

async function* listTargets(base: WorkspacePath, glob: string | undefined): AsyncGenerator<GrepTarget> {
  const stats = await withFsToolError(stat(base.absolute), base.relative)
  if (stats.isFile()) { yield { file: base.relative, absolute: base.absolute }; return }
  const matches = glob === undefined ? () => true : globFilter(glob)
  for await (const relative of walkFiles(base.absolute)) {
    if (matches(relative)) yield { file: joinRelative(base.relative, relative), absolute: path.join(base.absolute, relative) }
  }
}

/** A glob without `/` matches file names at any depth (like ripgrep); one with `/` matches the path relative to the base. */
function globFilter(glob: string): (relative: string) => boolean {
  const matcher = compileGlob(glob)
  return glob.includes('/') ? relative => matcher.test(relative) : relative => matcher.test(relative.slice(relative.lastIndexOf('/') + 1))
}

async function searchTargets(targets: AsyncIterable<GrepTarget>, regex: RegExp): Promise<string> {
  const output: string[] = []
  let bytes = 0
  for await (const target of targets) {
    for (const line of await matchingLines(target, regex)) {
      bytes += Buffer.byteLength(line) + 1
      if (output.length === GREP_MAX_MATCHES || bytes > GREP_MAX_OUTPUT_BYTES) return `${output.join('\n')}\n[Output capped; more matches exist. Narrow the pattern, path or glob.]`
      output.push(line)
    }
  }
  return output.length === 0 ? 'No matches found.' : output.join('\n')
}

async function matchingLines(target: GrepTarget, regex: RegExp): Promise<string[]> {
  const content = await readSearchable(target.absolute)
  if (content === null) return []
  const lines = content.split(/\r?\n/)
  const matches: string[] = []
  lines.forEach((line, index) => { if (regex.test(line)) matches.push(`${target.file}:${index + 1}: ${clip(line)}`) })
  return matches
}

/** The file's text, or null when it is too large, binary or unreadable. */
async function readSearchable(absolute: string): Promise<string | null> {
  const stats = await stat(absolute).catch(() => null)
  if (stats === null || stats.size > GREP_MAX_FILE_BYTES) return null
  const buffer = await readFile(absolute).catch(() => null)
  if (buffer === null || looksBinary(buffer)) return null
  return buffer.toString('utf8')
}

function clip(line: string): string {
  return line.length <= MAX_LINE_CHARS ? line : `${line.slice(0, MAX_LINE_CHARS)}…`
}

import { constants } from 'node:fs'
import type { WorkerFileHandle as FileHandle } from './sync-fs.ts'
import { openFolderBeneath } from './beneath.ts'
import { compileGlob } from './compile-glob.ts'
import { FileToolFailure, failureOf } from './file-tool-failure.ts'
import { GREP_MAX_FILE_BYTES, GREP_MAX_MATCHES, GREP_MAX_OUTPUT_BYTES } from './limits.ts'
import { openRegular, openRegularAt, readAtMost } from './open-regular.ts'
import { resolveInside } from './resolve-path.ts'
import type { ResolvedPath } from './resolve-path.ts'
import { joinRelative, walkBudget, walkFiles } from './walk-files.ts'
import type { WalkBudget } from './walk-files.ts'

const MAX_LINE_CHARS = 300

/**
 * `grep`: lines matching a JavaScript regular expression, as `file:line: text`, in the file or folder `userPath`,
 * optionally only in files matching `glob`. Binary files and files over 4 MiB are skipped; output is capped. The
 * worker runs with V8's linear-time engine as the fallback for patterns that backtrack too much, and its process has
 * a deadline for the patterns that engine cannot run.
 */
export async function grepFiles(root: string, userPath: string, pattern: string, glob: string | undefined): Promise<string> {
  const regex = compileRegex(pattern)
  const base = await resolveInside(root, userPath)
  const budget = walkBudget()
  const output: string[] = []
  let bytes = 0
  const keep = (line: string): boolean => {
    bytes += Buffer.byteLength(line) + 1
    if (output.length === GREP_MAX_MATCHES || bytes > GREP_MAX_OUTPUT_BYTES) return false
    output.push(line)
    return true
  }
  for await (const target of listTargets(base, glob, budget)) {
    if (!(await keepMatchingLines(target, regex, keep))) return `${output.join('\n')}\n[Output capped; more matches exist. Narrow the pattern, path or glob.]`
  }
  const note = budget.truncated ? `\n[The search stopped after ${budget.entries} entries; narrow the path.]` : ''
  return output.length === 0 ? `No matches found.${note}` : `${output.join('\n')}${note}`
}

function compileRegex(pattern: string): RegExp {
  try {
    const regex = new RegExp(pattern)
    // V8 compiles a pattern at its first match: one too large or nested too deeply fails only then, so match once here.
    regex.test('')
    return regex
  } catch (error) {
    throw new FileToolFailure('invalid_pattern', `Invalid regular expression: ${error instanceof Error ? error.message : String(error)}`)
  }
}

/** A file to search: its workspace-relative path, and how to open it (while the walk that found it waits). */
interface Target {
  readonly relative: string
  open(): Promise<FileHandle>
}

async function* listTargets(base: ResolvedPath, glob: string | undefined, budget: WalkBudget): AsyncGenerator<Target> {
  const folder = await openFolderBeneath(base.root, base.relative).catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined
    throw failureOf(error, base.relative)
  })
  if (folder === undefined) {
    // Not a folder: the file itself (anything but a regular file is skipped when it is opened).
    yield { relative: base.relative, open: () => openRegular(base, constants.O_RDONLY) }
    return
  }
  const matches = glob === undefined ? () => true : globFilter(glob)
  try {
    for await (const file of walkFiles(folder, budget)) {
      if (matches(file.relative)) yield { relative: joinRelative(base.relative, file.relative), open: () => openRegularAt(file.at, file.relative, constants.O_RDONLY) }
    }
  } finally {
    await folder.close()
  }
}

/** A glob without `/` matches file names at any depth (like ripgrep); one with `/` matches the path relative to the base. */
function globFilter(glob: string): (relative: string) => boolean {
  const matcher = compileGlob(glob)
  return glob.includes('/') ? relative => matcher.test(relative) : relative => matcher.test(relative.slice(relative.lastIndexOf('/') + 1))
}

/**
 * Hands `keep` each line of `target` that matches, as `file:line: text`, until it answers false (the output is full):
 * then false. A file of millions of matching lines is never held as that many output lines (4 MiB of empty lines
 * matching `^` ran the worker out of heap that way).
 */
async function keepMatchingLines(target: Target, regex: RegExp, keep: (line: string) => boolean): Promise<boolean> {
  const content = await readSearchable(target)
  if (content === null) return true
  const lines = content.split(/\r?\n/)
  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index] as string
    if (regex.test(line) && !keep(`${target.relative}:${index + 1}: ${clip(line)}`)) return false
  }
  return true
}

/** The file's text, or null when it is not a regular file, too large, binary or unreadable. */
async function readSearchable(target: Target): Promise<string | null> {
  const handle = await target.open().catch(() => null)
  if (handle === null) return null
  try {
    if ((await handle.stat()).size > GREP_MAX_FILE_BYTES) return null
    const buffer = await readAtMost(handle, GREP_MAX_FILE_BYTES)
    return buffer === null || buffer.subarray(0, 8192).includes(0) ? null : buffer.toString('utf8')
  } finally {
    await handle.close()
  }
}

function clip(line: string): string {
  return line.length <= MAX_LINE_CHARS ? line : `${line.slice(0, MAX_LINE_CHARS)}…`
}

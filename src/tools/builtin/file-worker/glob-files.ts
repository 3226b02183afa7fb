import { lstat } from 'node:fs/promises'
import { compileGlob } from './compile-glob.ts'
import { FileToolFailure, failureOf } from './file-tool-failure.ts'
import { GLOB_MAX_RESULTS } from './limits.ts'
import { resolveInside } from './resolve-path.ts'
import { joinRelative, walkBudget, walkFiles } from './walk-files.ts'

/** `glob`: the regular files under `userPath` whose path relative to it matches `pattern`, at most 1000. */
export async function globFiles(root: string, userPath: string, pattern: string): Promise<string> {
  const matcher = compileGlob(pattern)
  const base = await resolveInside(root, userPath)
  const stats = await lstat(base.absolute).catch((error: unknown) => { throw failureOf(error, base.relative) })
  if (!stats.isDirectory()) throw new FileToolFailure('not_a_directory', `${base.relative} is not a directory.`)
  const budget = walkBudget()
  const matches: string[] = []
  for await (const relative of walkFiles(base.absolute, budget)) {
    if (!matcher.test(relative)) continue
    if (matches.length === GLOB_MAX_RESULTS) return `${matches.join('\n')}\n[More than ${GLOB_MAX_RESULTS} files match; narrow the pattern.]`
    matches.push(joinRelative(base.relative, relative))
  }
  const note = budget.truncated ? `\n[The search stopped after ${budget.entries} entries; narrow the path.]` : ''
  return matches.length === 0 ? `No files match.${note}` : `${matches.join('\n')}${note}`
}

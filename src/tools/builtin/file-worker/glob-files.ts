import { openFolderBeneath } from './beneath.ts'
import { compileGlob } from './compile-glob.ts'
import { FileToolFailure, failureOf } from './file-tool-failure.ts'
import { GLOB_MAX_OUTPUT_BYTES, GLOB_MAX_RESULTS } from './limits.ts'
import { resolveInside } from './resolve-path.ts'
import { joinRelative, walkBudget, walkFiles } from './walk-files.ts'

/** `glob`: the regular files under `userPath` whose path relative to it matches `pattern`, at most 1000 and 256 KiB of paths. */
export async function globFiles(root: string, userPath: string, pattern: string): Promise<string> {
  const matcher = compileGlob(pattern)
  const base = await resolveInside(root, userPath)
  const folder = await openFolderBeneath(base.root, base.relative).catch((error: unknown) => {
    throw (error as NodeJS.ErrnoException).code === 'ENOTDIR' ? new FileToolFailure('not_a_directory', `${base.relative} is not a directory.`) : failureOf(error, base.relative)
  })
  const budget = walkBudget()
  const matches: string[] = []
  let bytes = 0
  try {
    for await (const { relative } of walkFiles(folder, budget)) {
      if (!matcher.test(relative)) continue
      const match = joinRelative(base.relative, relative)
      bytes += Buffer.byteLength(match) + 1
      if (matches.length === GLOB_MAX_RESULTS || bytes > GLOB_MAX_OUTPUT_BYTES) return `${matches.join('\n')}\n[More than ${matches.length} files match; narrow the pattern.]`
      matches.push(match)
    }
  } finally {
    await folder.close()
  }
  const note = budget.truncated ? `\n[The search stopped after ${budget.entries} entries; narrow the path.]` : ''
  return matches.length === 0 ? `No files match.${note}` : `${matches.join('\n')}${note}`
}

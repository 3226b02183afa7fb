import { lstat, readlink, realpath } from 'node:fs/promises'
import path from 'node:path'
import { FileToolFailure } from './file-tool-failure.ts'

/**
 * A path inside the workspace: the workspace's real root, the path's real absolute path (for checks; opens go through
 * `openFolderBeneath` in `beneath.ts`, from `root` along `relative`), and the same path relative to the root (posix, `.` for the
 * root).
 */
export interface ResolvedPath {
  readonly root: string
  readonly absolute: string
  readonly relative: string
}

const MAX_SYMLINK_HOPS = 40

/**
 * Resolves `userPath` (relative to `root`, or absolute inside it) to its real location and refuses it when that lies
 * outside the root: `..`, absolute paths elsewhere, and symbolic links out (also dangling ones and those above a path
 * that does not exist yet, which a write would follow). Messages name the path as the model wrote it, never the
 * target of a link: a link to `/proc/self/fd/N` must not become an oracle for what the host holds.
 */
export async function resolveInside(root: string, userPath: string): Promise<ResolvedPath> {
  if (userPath.includes('\0')) throw new FileToolFailure('invalid_input', 'The path contains a NUL character')
  const realRoot = await realpath(root).catch(() => { throw new FileToolFailure('workspace_unavailable', 'The workspace is not accessible') })
  const lexical = path.resolve(root, userPath)
  if (!isInside(root, lexical) && !isInside(realRoot, lexical)) throw outside(userPath, 'it is outside the workspace root')
  const real = await realPathAllowingMissing(lexical, 0, userPath)
  if (!isInside(realRoot, real)) throw outside(userPath, 'it leads through a symbolic link to a place outside the workspace root')
  return { root: realRoot, absolute: real, relative: toPosix(path.relative(realRoot, real)) || '.' }
}

/** True when `candidate` is `parent` or lies below it (both absolute and normalized). */
export function isInside(parent: string, candidate: string): boolean {
  const relative = path.relative(parent, candidate)
  return relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative))
}

/** The real path of `target`; for a missing path, the real path of its nearest existing parent joined with the rest. */
async function realPathAllowingMissing(target: string, hops: number, userPath: string): Promise<string> {
  if (hops > MAX_SYMLINK_HOPS) throw new FileToolFailure('path_symlink_loop', `Too many symbolic links while resolving ${userPath}`)
  try {
    return await realpath(target)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ELOOP') throw new FileToolFailure('path_symlink_loop', `Too many symbolic links while resolving ${userPath}`)
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new FileToolFailure('path_unresolvable', `Cannot resolve ${userPath}${code === undefined ? '' : ` (${code})`}`)
  }
  const danglingLink = await readLinkIfSymlink(target)
  // A dangling link would be followed by a later write, so its target is what must be checked.
  if (danglingLink !== null) return realPathAllowingMissing(path.resolve(path.dirname(target), danglingLink), hops + 1, userPath)
  const parent = path.dirname(target)
  if (parent === target) return target
  return path.join(await realPathAllowingMissing(parent, hops, userPath), path.basename(target))
}

async function readLinkIfSymlink(target: string): Promise<string | null> {
  const stats = await lstat(target).catch(() => null)
  return stats?.isSymbolicLink() === true ? readlink(target) : null
}

function outside(userPath: string, reason: string): FileToolFailure {
  return new FileToolFailure('path_outside_workspace', `Access denied: the path "${userPath}" is not allowed because ${reason}. Use a path inside the workspace.`)
}

function toPosix(relative: string): string {
  return relative.split(path.sep).join('/')
}

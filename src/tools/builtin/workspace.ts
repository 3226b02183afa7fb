import { lstat, readlink, realpath } from 'node:fs/promises'
import path from 'node:path'
import { ToolError } from '../tool'

/** A path inside the workspace: its real absolute path, and the same path relative to the root (posix, `.` for the root). */
export interface WorkspacePath {
  readonly absolute: string
  readonly relative: string
}

/** The directory the file tools may touch. `resolve` refuses every path whose real location is outside the root. */
export interface Workspace {
  /** The root as given, made absolute. */
  readonly root: string
  /** Resolves `userPath` (relative to the root, or absolute inside it); throws `ToolError` `path_outside_workspace` on an escape. */
  resolve(userPath: string): Promise<WorkspacePath>
}

const MAX_SYMLINK_HOPS = 40

/**
 * Creates a workspace rooted at `root`. Escapes through `..`, absolute paths outside the root and symbolic links whose
 * real path lies outside are refused, also for paths that do not exist yet (the nearest existing parent is checked).
 */
export function createWorkspace(root: string): Workspace {
  const absoluteRoot = path.resolve(root)
  let realRoot: Promise<string> | undefined
  const getRealRoot = (): Promise<string> => (realRoot ??= realpath(absoluteRoot).catch((error: unknown) => {
    realRoot = undefined
    throw new ToolError(`The workspace root ${absoluteRoot} is not accessible: ${errorMessage(error)}`, 'workspace_unavailable')
  }))
  return {
    root: absoluteRoot,
    resolve: async userPath => {
      const resolvedRoot = await getRealRoot()
      const lexical = path.resolve(absoluteRoot, userPath)
      if (!isInside(absoluteRoot, lexical) && !isInside(resolvedRoot, lexical)) throw outsideError(userPath, 'it is outside the workspace root')
      const real = await realPathAllowingMissing(lexical, 0)
      if (!isInside(resolvedRoot, real)) throw outsideError(userPath, `it resolves through a symbolic link to ${real}, outside the workspace root`)
      return { absolute: real, relative: toPosix(path.relative(resolvedRoot, real)) || '.' }
    },
  }
}

/** True when `candidate` is `parent` or lies below it (both absolute and normalized). */
function isInside(parent: string, candidate: string): boolean {
  const relative = path.relative(parent, candidate)
  return relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative))
}

/** The real path of `target`; for a missing path, the real path of its nearest existing parent joined with the rest. */
async function realPathAllowingMissing(target: string, hops: number): Promise<string> {
  if (hops > MAX_SYMLINK_HOPS) throw new ToolError(`Too many symbolic links while resolving ${target}`, 'path_symlink_loop')
  try {
    return await realpath(target)
  } catch (error) {
    if (!isMissing(error)) throw new ToolError(`Cannot resolve ${target}: ${errorMessage(error)}`, 'path_unresolvable')
  }
  const danglingLink = await readLinkIfSymlink(target)
  // A dangling link would be followed by a later write, so its target is what must be checked.
  if (danglingLink !== null) return realPathAllowingMissing(path.resolve(path.dirname(target), danglingLink), hops + 1)
  const parent = path.dirname(target)
  if (parent === target) return target
  return path.join(await realPathAllowingMissing(parent, hops), path.basename(target))
}

async function readLinkIfSymlink(target: string): Promise<string | null> {
  const stats = await lstat(target).catch(() => null)
  return stats?.isSymbolicLink() === true ? readlink(target) : null
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return code === 'ENOENT' || code === 'ENOTDIR'
}

function outsideError(userPath: string, reason: string): ToolError {
  return new ToolError(`Access denied: the path "${userPath}" is not allowed because ${reason}. Use a path inside the workspace.`, 'path_outside_workspace')
}

function toPosix(relative: string): string {
  return relative.split(path.sep).join('/')
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

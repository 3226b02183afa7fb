import { lstatSync, readlinkSync } from 'node:fs'
import { realpath } from './sync-fs.ts'
import path from 'node:path'
import { openChildFolderSync, openRootSync } from './beneath.ts'
import type { HeldFolderSync } from './beneath.ts'
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
 * that does not exist yet, which a write would follow). Links are followed by the worker itself, one name at a time
 * through folders held open from the root, never by the kernel: a link leaving the root is refused before anything
 * beyond it is looked up, so a sibling workspace the worker can reach (one worker serves a tenant's sessions) is never
 * walked, and how a link through it answers tells nothing of what it holds. Messages name the path as the model wrote
 * it, never the target of a link: a link to `/proc/self/fd/N` must not become an oracle for what the host holds.
 */
export async function resolveInside(root: string, userPath: string): Promise<ResolvedPath> {
  if (userPath.includes('\0')) throw new FileToolFailure('invalid_input', 'The path contains a NUL character')
  const realRoot = await realpath(root).catch(() => { throw new FileToolFailure('workspace_unavailable', 'The workspace is not accessible') })
  const lexical = path.resolve(root, userPath)
  const base = isInside(root, lexical) ? root : isInside(realRoot, lexical) ? realRoot : undefined
  if (base === undefined) throw outside(userPath, 'it is outside the workspace root')
  const names = resolveNames(realRoot, namesOf(path.relative(base, lexical)), userPath)
  return { root: realRoot, absolute: path.join(realRoot, ...names), relative: names.join('/') || '.' }
}

/** True when `candidate` is `parent` or lies below it (both absolute and normalized). */
export function isInside(parent: string, candidate: string): boolean {
  const relative = path.relative(parent, candidate)
  return relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative))
}

/**
 * A resolution under way: the folders held open from the root down to the last real folder of `names` (the names
 * resolved so far; those past a missing name or a file are kept as written, what a write would create), the names
 * left to resolve, and the links followed.
 */
interface Resolution {
  readonly held: HeldFolderSync[]
  readonly names: string[]
  pending: string[]
  hops: number
}

/**
 * The real names below `realRoot` that `pending` leads to, links followed as the kernel would but never out of the
 * root. Synchronous, a few system calls a name: the file worker serves one call at a time (the services' process
 * resolves only `.`, which looks nothing up).
 */
function resolveNames(realRoot: string, pending: string[], userPath: string): string[] {
  if (pending.length === 0) return []
  const resolution: Resolution = { held: [attempt(() => openRootSync(realRoot), () => new FileToolFailure('workspace_unavailable', 'The workspace is not accessible'))], names: [], pending, hops: 0 }
  try {
    for (let name = resolution.pending.shift(); name !== undefined; name = resolution.pending.shift()) step(resolution, realRoot, name, userPath)
    return resolution.names
  } finally {
    for (const folder of resolution.held) folder.close()
  }
}

/**
 * Resolves one name of the path: `..` goes up the held folders, a link is replaced by its target, a folder with names
 * after it is opened (without following a link) and held; the last name is only looked at.
 */
function step(resolution: Resolution, realRoot: string, name: string, userPath: string): void {
  if (name === '' || name === '.') return
  if (name === '..') return up(resolution, userPath)
  const folder = resolution.held[resolution.names.length]
  // Past a missing name or a file: the rest is kept as written (an open fails there, or a write creates it).
  if (folder === undefined) return void resolution.names.push(name)
  const child = resolution.pending.length === 0 ? undefined : attempt(() => openChildFolderSync(folder, name), code => code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP' ? undefined : unresolvable(userPath, code))
  if (child !== undefined) resolution.held.push(child)
  else {
    const at = folder.at(name)
    const stats = attempt(() => lstatSync(at), code => code === 'ENOENT' || code === 'ENOTDIR' ? undefined : unresolvable(userPath, code))
    if (stats?.isSymbolicLink() === true) return follow(resolution, realRoot, attempt(() => readlinkSync(at), code => unresolvable(userPath, code)), userPath)
  }
  resolution.names.push(name)
}

/** `..`: the parent of the last name, never above the root (only a link's target can ask for that: it is refused). */
function up(resolution: Resolution, userPath: string): void {
  if (resolution.names.length === 0) throw outside(userPath, 'it leads through a symbolic link to a place outside the workspace root')
  // The last name is a folder held open when the held folders (the root first) outnumber the names.
  if (resolution.held.length > resolution.names.length) resolution.held.pop()?.close()
  resolution.names.pop()
}

/** Replaces the link just met by its target's names: from the root for an absolute target inside it; refused elsewhere. */
function follow(resolution: Resolution, realRoot: string, target: string, userPath: string): void {
  resolution.hops += 1
  if (resolution.hops > MAX_SYMLINK_HOPS) throw new FileToolFailure('path_symlink_loop', `Too many symbolic links while resolving ${userPath}`)
  if (!path.isAbsolute(target)) return void (resolution.pending = [...target.split('/'), ...resolution.pending])
  // Compared as written, before any `..` in it is resolved (the walk resolves those, through the real folders).
  if (target !== realRoot && !target.startsWith(`${realRoot}/`)) throw outside(userPath, 'it leads through a symbolic link to a place outside the workspace root')
  while (resolution.held.length > 1) resolution.held.pop()?.close()
  resolution.names.length = 0
  resolution.pending = [...target.slice(realRoot.length).split('/'), ...resolution.pending]
}

/**
 * What `run` returns; when it throws a system error, what `failure` makes of its code: thrown when an error,
 * returned (an expected miss, `undefined`) otherwise.
 */
function attempt<T, F extends FileToolFailure | undefined>(run: () => T, failure: (code: string | undefined) => F): T | Exclude<F, FileToolFailure> {
  try {
    return run()
  } catch (error) {
    const outcome = failure((error as NodeJS.ErrnoException).code)
    if (outcome instanceof FileToolFailure) throw outcome
    return outcome as Exclude<F, FileToolFailure>
  }
}

/** The names of a relative path (`.` and empty ones left out). */
function namesOf(relative: string): string[] {
  return relative.split(path.sep).filter(name => name !== '' && name !== '.')
}

function unresolvable(userPath: string, code: string | undefined): FileToolFailure {
  return new FileToolFailure('path_unresolvable', `Cannot resolve ${userPath}${code === undefined ? '' : ` (${code})`}`)
}

function outside(userPath: string, reason: string): FileToolFailure {
  return new FileToolFailure('path_outside_workspace', `Access denied: the path "${userPath}" is not allowed because ${reason}. Use a path inside the workspace.`)
}


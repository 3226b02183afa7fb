import { closeSync, constants, existsSync, openSync } from 'node:fs'
import { mkdir, open } from './sync-fs.ts'
import type { WorkerFileHandle as FileHandle } from './sync-fs.ts'

/** Flags of every folder opened on the way down from the root: a folder, and never through a link. */
const FOLDER_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW

/**
 * Whether names are reached through an open folder's descriptor (`/proc/self/fd/N/name`): always on Linux, where the
 * services run (without /proc every open then fails, none follows a link); elsewhere when the system has
 * `/proc/self/fd`. Elsewhere (a library user on macOS) a name is reached by its path, and a folder swapped for a link
 * between two calls is followed: the guarantee below holds on Linux only.
 */
const BY_DESCRIPTOR = process.platform === 'linux' || existsSync('/proc/self/fd')

/**
 * A folder of the workspace held open. Names inside it are reached through its descriptor (`at`), so whatever is
 * renamed or swapped for a link above it afterwards, they stay inside this folder: the worker may be confined to a
 * tenant's whole folder while it serves one session, and a session's own `shell` racing links against it cannot lead
 * it into a sibling session.
 */
export interface HeldFolder {
  /** The path that reaches `name` inside this folder and nowhere else (`.` for the folder itself). */
  at(name: string): string
  close(): Promise<void>
}

/**
 * Opens the folder `relative` (`/`-separated, `.` for the root; as {@link resolveInside} returns it, with no `..`)
 * below `root`, one folder at a time, each opened with O_NOFOLLOW through its parent's descriptor: a folder replaced
 * by a link since the path was resolved fails the open (ELOOP, ENOTDIR), it is never followed. With `create`, missing
 * folders are made (0700) on the way, the same way. Errors are the file system's, for the caller to name.
 */
export async function openFolderBeneath(root: string, relative: string, create = false): Promise<HeldFolder> {
  let folder = held(await open(root, constants.O_RDONLY | constants.O_DIRECTORY), root)
  for (const name of relative.split('/')) {
    if (name === '.' || name === '') continue
    try {
      const child = await openChildFolder(folder, name, create)
      await folder.close()
      folder = child
    } catch (error) {
      await folder.close()
      throw error
    }
  }
  return folder
}

/** The folder `name` inside the held `folder`, made first when missing and `create` is set. */
export async function openChildFolder(folder: HeldFolder, name: string, create = false): Promise<HeldFolder> {
  const at = folder.at(name)
  try {
    return held(await open(at, FOLDER_FLAGS), at)
  } catch (error) {
    if (!create || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  await mkdir(at, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => { if (error.code !== 'EEXIST') throw error })
  return held(await open(at, FOLDER_FLAGS), at)
}

/** The folder of `relative` and its last name: `a/b/c.txt` is `a/b` and `c.txt`, `c.txt` is `.` and `c.txt`. */
export function splitLast(relative: string): { folder: string; name: string } {
  const slash = relative.lastIndexOf('/')
  return slash < 0 ? { folder: '.', name: relative } : { folder: relative.slice(0, slash), name: relative.slice(slash + 1) }
}

/**
 * A folder held open by its descriptor for synchronous use, as {@link HeldFolder}: the file worker serves one call at
 * a time, so resolving a path name by name this way spares a round trip through the thread pool per name.
 */
export interface HeldFolderSync {
  /** The path that reaches `name` inside this folder and nowhere else (`.` for the folder itself). */
  at(name: string): string
  close(): void
}

/** The folder `root` held open (a path the services chose, followed as it is), synchronously. */
export function openRootSync(root: string): HeldFolderSync {
  const fd = openSync(root, constants.O_RDONLY | constants.O_DIRECTORY)
  return { at: namesBelow(BY_DESCRIPTOR ? `/proc/self/fd/${fd}` : root), close: () => closeSync(fd) }
}

/** The folder `name` inside the held `folder`, opened with O_NOFOLLOW through its descriptor, synchronously. */
export function openChildFolderSync(folder: HeldFolderSync, name: string): HeldFolderSync {
  const at = folder.at(name)
  const fd = openSync(at, FOLDER_FLAGS)
  return { at: namesBelow(BY_DESCRIPTOR ? `/proc/self/fd/${fd}` : at), close: () => closeSync(fd) }
}

function held(handle: FileHandle, where: string): HeldFolder {
  return { at: namesBelow(BY_DESCRIPTOR ? `/proc/self/fd/${handle.fd}` : where), close: () => handle.close() }
}

/** The paths of names inside the folder `base` reaches. */
function namesBelow(base: string): (name: string) => string {
  return name => {
    if (name === '.') return base
    // Names come from a resolved path or a folder listing: never `..` nor a path, checked all the same.
    if (name === '..' || name.includes('/') || name === '') throw Object.assign(new Error('not a name inside the folder'), { code: 'EINVAL' })
    return `${base}/${name}`
  }
}

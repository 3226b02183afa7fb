import { execFile } from 'node:child_process'
import { lstat, readdir, rm, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { legacyWorkspaceFolderName, workspacePath } from './workspace'

const run = promisify(execFile)

/** Separator of a sub-agent's label in a session key (`<root key>:<label>`), as {@link folderSegment} escapes it. */
const CHILD_ESCAPED = '%3A'
/** The same in a {@link legacyWorkspaceFolderName}. */
const LEGACY_CHILD_ESCAPED = '_3a'

/**
 * Removes the workspaces of session key `sessionKey` under `root`: its folder, the folders of its sub-agents' trees
 * (`<key>:<label>…`) and the flat folders from before ({@link legacyWorkspaceFolderName}). Only names this process
 * computed or found in folders no tenant writes to (the root, the tenant's folder) are removed; inside a workspace
 * nothing is followed: see {@link removeTree}. Removing what is already gone is not an error.
 */
export async function removeSessionWorkspaces(root: string, sessionKey: string): Promise<string[]> {
  const [tenantFolder, sessionFolder] = workspacePath(sessionKey)
  const legacy = legacyWorkspaceFolderName(sessionKey)
  const targets = [
    ...(await namesIn(join(root, tenantFolder), name => name === sessionFolder || name.startsWith(`${sessionFolder}${CHILD_ESCAPED}`))).map(name => join(root, tenantFolder, name)),
    ...(await namesIn(root, name => name === legacy || name.startsWith(`${legacy}${LEGACY_CHILD_ESCAPED}`))).map(name => join(root, name)),
  ]
  for (const target of targets) await removeTree(target)
  return targets
}

async function namesIn(folder: string, keep: (name: string) => boolean): Promise<string[]> {
  return (await readdir(folder).catch(() => [] as string[])).filter(keep)
}

/**
 * Removes `path` and everything below it without following a link: a link is removed itself (its target stays), so
 * a workspace whose tenant planted links to host paths loses only the links. `fs.rm` first (it `lstat`s every entry
 * and unlinks links, FIFOs and sockets as files); what it cannot remove (a folder its tenant made unreadable, a tree
 * deeper than a path may be long) goes with GNU `chmod -R` (which skips links met on the way) and `rm -rf`, which walk
 * the tree relative to each folder, without a length bound.
 */
export async function removeTree(path: string): Promise<void> {
  const info = await lstat(path).catch(() => undefined)
  if (!info) return
  if (!info.isDirectory()) return unlink(path)
  try {
    await rm(path, { recursive: true, force: true })
  } catch {
    await run('chmod', ['-R', 'u+rwx', '--', path]).catch(() => undefined)
    await run('rm', ['-rf', '--', path])
  }
}

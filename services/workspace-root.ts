import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

/** The marker file at the top of a shared workspace root; it holds the deployment's root id. */
export const WORKSPACE_ROOT_MARKER = '.zidane-workspace-root'

/** Why a services replica refuses to start: it does not see the workspace root the other replicas share. */
export type WorkspaceRootErrorCode = 'workspace_root_unmarked' | 'workspace_root_mismatch'

/** Thrown at start-up when this replica's workspace root is not the deployment's shared one. */
export class WorkspaceRootError extends Error {
  constructor(readonly code: WorkspaceRootErrorCode, message: string) {
    super(message)
    this.name = 'WorkspaceRootError'
  }
}

/** What the check needs: the root, the id every replica expects, and whether this replica may write the marker. */
export interface WorkspaceRootCheck {
  root: string
  /** `ZIDANE_WORKSPACE_ROOT_ID`: the same value for every replica of one deployment. */
  expectedId: string
  /** `ZIDANE_WORKSPACE_ROOT_INIT=1`: this replica is the first and writes the marker when the root has none. */
  init: boolean
}

async function readMarker(root: string): Promise<string | undefined> {
  return (await readFile(join(root, WORKSPACE_ROOT_MARKER), 'utf8').catch(() => undefined))?.trim()
}

/** Writes the marker unless one exists (an exclusive create, so two first replicas cannot both write it). */
async function writeMarker(root: string, id: string): Promise<void> {
  await mkdir(root, { recursive: true })
  await writeFile(join(root, WORKSPACE_ROOT_MARKER), `${id}\n`, { flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error
  })
}

/**
 * Resolves when `root` carries the marker with `expectedId` (written first by the replica started with `init`);
 * throws {@link WorkspaceRootError} otherwise, with a message saying what the operator must provide. Session files
 * must not depend on the replica that ran a step: a `read_file` replayed on another replica has to see the same file.
 */
export async function checkWorkspaceRoot(check: WorkspaceRootCheck): Promise<void> {
  if (check.init) await writeMarker(check.root, check.expectedId)
  const found = await readMarker(check.root)
  if (found === undefined) {
    throw new WorkspaceRootError('workspace_root_unmarked', `workspace root ${check.root} has no ${WORKSPACE_ROOT_MARKER} marker: this replica does not see the workspace root the other replicas share. Mount the shared volume at ZIDANE_WORKSPACE_ROOT on every services replica (the first replica, started with ZIDANE_WORKSPACE_ROOT_INIT=1, writes the marker)`)
  }
  if (found !== check.expectedId) {
    throw new WorkspaceRootError('workspace_root_mismatch', `workspace root ${check.root} belongs to deployment "${found}", not "${check.expectedId}" (ZIDANE_WORKSPACE_ROOT_ID): the replicas see different workspace roots. Every services replica must mount the same shared folder at ZIDANE_WORKSPACE_ROOT`)
  }
}

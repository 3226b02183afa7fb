import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import type { FileOperation, FileWorker } from '../../../../src/tools/builtin/file-worker-client'
import { ToolError } from '../../../../src/tools/tool'

/** What the attacker must never read: the content of the sibling's `secret.txt`. */
export const SECRET = 'S2-SECRET'

/** The folders of tenant `acme` with two sessions: `s1` (the attacker's) and `s2` (its sibling). */
export interface TwoSessionTenant { tenant: string; s1: string; s2: string }

/** Creates `<root>/acme/s1` and `<root>/acme/s2`, the sibling holding `secret.txt` with {@link SECRET}. */
export async function twoSessionTenant(root: string): Promise<TwoSessionTenant> {
  const tenant = path.join(root, 'acme')
  const s1 = path.join(tenant, 's1')
  const s2 = path.join(tenant, 's2')
  await mkdir(s1, { recursive: true })
  await mkdir(s2, { recursive: true })
  await writeFile(path.join(s2, 'secret.txt'), `${SECRET}\n`)
  return { tenant, s1, s2 }
}

/** The text of a call, or `error:<code>` when it failed. */
export async function outcome(worker: FileWorker, operation: FileOperation): Promise<string> {
  return worker(operation, new AbortController().signal).then(text => text, (error: unknown) => `error:${error instanceof ToolError ? error.code : String(error)}`)
}

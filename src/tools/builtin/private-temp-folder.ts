import { lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isProcessAlive } from '../../durable/process-alive'

/**
 * Creates a fresh folder `<tmp>/<prefix><pid>-XXXXXX` only this process's user can enter (mkdtemp makes it 0700, under a
 * name nobody could have planted), removed when the process exits. Folders of the prefix that processes killed before
 * their exit handler left behind go first, but only those this user owns: the temporary folder is shared, and a
 * folder another user planted is neither ours to delete nor a reason to fail.
 */
export function createPrivateTempFolder(prefix: string): string {
  removeFoldersOfDeadProcesses(prefix)
  const folder = mkdtempSync(join(tmpdir(), `${prefix}${process.pid}-`))
  process.once('exit', () => rmSync(folder, { recursive: true, force: true }))
  return folder
}

function removeFoldersOfDeadProcesses(prefix: string): void {
  let entries: string[]
  try {
    entries = readdirSync(tmpdir()).filter(name => name.startsWith(prefix))
  } catch {
    return
  }
  for (const entry of entries) {
    const pid = Number(entry.slice(prefix.length).split('-')[0])
    if (!Number.isInteger(pid) || pid <= 0 || isProcessAlive(pid)) continue
    try {
      const folder = join(tmpdir(), entry)
      const stats = lstatSync(folder)
      if (stats.isDirectory() && stats.uid === process.getuid?.()) rmSync(folder, { recursive: true, force: true })
    } catch {
      // Gone meanwhile, or not ours to remove: left as it is.
    }
  }
}

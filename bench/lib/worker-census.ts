import { readFileSync } from 'node:fs'

/** What marks a file-tool worker in a process's command line: its entry, stripped into a temporary folder or built. */
const WORKER_MARKS = ['zidane-file-worker-', '/file-worker/main.js']

function children(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
}

/** Whether `pid` is a file-tool worker (its command line carries one of `marks`): the Node process itself, not the sandbox's processes around it. */
function isWorker(pid: number, marks: readonly string[]): boolean {
  try {
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    const program = command.slice(0, command.indexOf('\0')).split('/').pop() ?? ''
    return program.startsWith('node') && marks.some(mark => command.includes(mark))
  } catch {
    return false // gone since its parent listed it
  }
}

/** The file-tool workers among the descendants of `root` now. */
function workersBelow(root: number, marks: readonly string[]): number[] {
  const found: number[] = []
  const pending = children(root)
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    if (isWorker(pid, marks)) found.push(pid)
    else pending.push(...children(pid))
  }
  return found
}

/**
 * Runs `run` and counts the distinct file-tool worker processes seen meanwhile among the descendants of `root` (this
 * process by default: the bench's stacks are its children), sampled every `everyMs` through Linux's /proc (none
 * elsewhere). A worker that lives less than a sample's interval may be missed: a lower bound. `marks` say what a
 * worker's command line carries (default: the file worker's entry).
 */
export async function countWorkersDuring<T>(run: () => Promise<T>, everyMs = 200, root = process.pid, marks: readonly string[] = WORKER_MARKS): Promise<{ result: T; workers: number }> {
  const seen = new Set<number>()
  const sample = (): void => { for (const pid of workersBelow(root, marks)) seen.add(pid) }
  sample()
  const timer = setInterval(sample, everyMs)
  try {
    const result = await run()
    sample()
    return { result, workers: seen.size }
  } finally {
    clearInterval(timer)
  }
}

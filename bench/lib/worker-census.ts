import { readdirSync, readFileSync } from 'node:fs'

/** What marks a file-tool worker in a process's command line: its entry, stripped into a temporary folder or built. */
const WORKER_MARKS = ['zidane-file-worker-', '/file-worker/main.js']

/** The processes of this host that are file-tool workers now, by pid. */
function workerPids(): number[] {
  const pids: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const command = readFileSync(`/proc/${name}/cmdline`, 'utf8')
      if (WORKER_MARKS.some(mark => command.includes(mark))) pids.push(Number(name))
    } catch {
      // Gone since the listing.
    }
  }
  return pids
}

/**
 * Runs `run` and counts the distinct file-tool worker processes seen on this host meanwhile, sampled every `everyMs`
 * (Linux's /proc; none elsewhere). A worker that lives less than a sample's interval may be missed: a lower bound.
 */
export async function countWorkersDuring<T>(run: () => Promise<T>, everyMs = 200): Promise<{ result: T; workers: number }> {
  const seen = new Set<number>()
  const sample = (): void => { for (const pid of workerPids()) seen.add(pid) }
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

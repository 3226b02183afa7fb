import { readdir, readFile } from 'node:fs/promises'
import type { ToolDef } from '../../../src/tools/tool'
import { runTool, textOf } from './tool-context'

/** Pids of host processes whose command line contains `marker`. */
export async function processesWith(marker: string): Promise<number[]> {
  const pids: number[] = []
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const commandLine = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')
    if (commandLine.includes(marker)) pids.push(Number(entry))
  }
  return pids
}

/** Anonymous memory (RssAnon) of the process `pid` in bytes; 0 once it is gone. */
async function anonymousMemory(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '')
  const kib = /RssAnon:\s+(\d+) kB/.exec(status)?.[1]
  return kib === undefined ? 0 : Number(kib) * 1024
}

/** What a sampler saw of the processes whose command line holds a marker, every 20 ms while calls ran. */
export interface AttackPeak {
  texts: string[]
  /** Most processes seen at once. */
  processes: number
  /** Most anonymous memory of them seen at once, in bytes. */
  memoryBytes: number
  /** Most host processes and threads seen at once (/proc/loadavg). */
  hostTasks: number
  /** Most tmpfs memory of the host seen at once above what it was before the calls (Shmem of /proc/meminfo), in bytes. */
  tmpfsBytes: number
}

/** The host's tmpfs and shared memory (Shmem), in bytes. */
async function hostSharedMemory(): Promise<number> {
  const kib = /Shmem:\s+(\d+) kB/.exec(await readFile('/proc/meminfo', 'utf8'))?.[1]
  return Number(kib ?? 0) * 1024
}

/** Runs every `[tool, command]` call at once while sampling the processes that carry `marker`; the peaks. */
export async function attackAtOnce(calls: ReadonlyArray<[ToolDef, string]>, marker: string, timeoutMs: number): Promise<AttackPeak> {
  const peak = { processes: 0, memoryBytes: 0, hostTasks: 0, tmpfsBytes: 0 }
  const sharedBefore = await hostSharedMemory()
  let sampling: Promise<void> | undefined
  const sample = async (): Promise<void> => {
    const pids = await processesWith(marker)
    const memory = (await Promise.all(pids.map(anonymousMemory))).reduce((sum, bytes) => sum + bytes, 0)
    const tasks = Number((await readFile('/proc/loadavg', 'utf8')).split(' ')[3]?.split('/')[1])
    const tmpfs = (await hostSharedMemory()) - sharedBefore
    Object.assign(peak, { processes: Math.max(peak.processes, pids.length), memoryBytes: Math.max(peak.memoryBytes, memory), hostTasks: Math.max(peak.hostTasks, tasks), tmpfsBytes: Math.max(peak.tmpfsBytes, tmpfs) })
  }
  const sampler = setInterval(() => { sampling ??= sample().finally(() => { sampling = undefined }) }, 20)
  const results = await Promise.all(calls.map(([tool, command]) => runTool(tool, { command, timeoutMs }))).finally(() => clearInterval(sampler))
  await sampling
  console.info(`${marker}: peak ${peak.processes} processes, ${(peak.memoryBytes / 2 ** 20).toFixed(0)} MiB anonymous memory, ${(peak.tmpfsBytes / 2 ** 20).toFixed(0)} MiB more tmpfs, ${peak.hostTasks} host tasks`)
  return { texts: results.map(result => textOf(result.content)), ...peak }
}

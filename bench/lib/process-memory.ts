import { readFileSync } from 'node:fs'

function descendants(pid: number): number[] {
  let children: number[] = []
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    return []
  }
  return children.flatMap(child => [child, ...descendants(child)])
}

/** Peak resident set size (VmHWM, MiB) of `pid` and of each descendant (a `tsx` wrapper runs the script in a child). */
export function peakRssMiB(pid: number): Array<{ pid: number; command: string; peakMiB: number }> {
  return [pid, ...descendants(pid)].flatMap(process => {
    try {
      const status = readFileSync(`/proc/${process}/status`, 'utf8')
      const kib = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 'NaN')
      const command = readFileSync(`/proc/${process}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(-1)[0] ?? ''
      return [{ pid: process, command, peakMiB: kib / 1024 }]
    } catch {
      return []
    }
  })
}

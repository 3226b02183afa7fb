import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import type { StepKey } from 'zidane/durable'
import { loadServicesConfig } from './config'

/** A kill plan: SIGKILL this process right before its `killAt`-th live journal boundary (1-based, counted across restarts). */
export interface KillPlan {
  killAt: number
}

/**
 * Test-only crash injection. With `ZIDANE_TEST_KILL_PLAN=<file>` holding a `KillPlan`, every live journal boundary
 * (a step about to be issued, every step before it journaled) is appended to `<file>.boundaries`; at the planned one
 * the process kills itself with SIGKILL, once (`<file>.fired`). Without the variable it returns no option at all.
 */
export function boundaryProbe(file: string | undefined = loadServicesConfig().killPlanFile): { onBoundary?: (key: StepKey) => void } {
  if (!file) return {}
  return { onBoundary: key => recordBoundary(file, key) }
}

function recordBoundary(file: string, key: StepKey): void {
  const log = `${file}.boundaries`
  appendFileSync(log, `${key.name}\n`)
  if (!existsSync(file) || existsSync(`${file}.fired`)) return
  const plan = JSON.parse(readFileSync(file, 'utf8')) as KillPlan
  const reached = readFileSync(log, 'utf8').split('\n').filter(Boolean).length
  if (reached !== plan.killAt) return
  writeFileSync(`${file}.fired`, key.name)
  process.kill(process.pid, 'SIGKILL')
}

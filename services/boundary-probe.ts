import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import type { StepKey } from 'zidane/durable'
import { runningStepClosures, unacknowledgedSteps } from 'zidane/restate'
import { loadServicesConfig } from './config'

/**
 * A kill plan: SIGKILL this process right before its `killAt`-th live journal boundary (1-based, counted across
 * restarts), or the first one after it at which no step closure of any invocation runs and no finished one waits for
 * Restate to acknowledge its result (concurrent children): a kill then cuts no step in flight, so every finished step
 * stays finished.
 */
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
  if (plan.killAt <= 0 || reached < plan.killAt || runningStepClosures() > 0 || unacknowledgedSteps() > 0) return
  writeFileSync(`${file}.fired`, key.name)
  process.kill(process.pid, 'SIGKILL')
}

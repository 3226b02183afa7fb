import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import type { StepKey } from 'zidane/durable'
import { createReplayTracker, currentStep, runningStepClosures, unacknowledgedSteps } from 'zidane/restate'
import type { ReplayTracker } from 'zidane/restate'
import { loadServicesConfig } from './config'

/**
 * A kill plan: SIGKILL this process right before its `killAt`-th live journal boundary (1-based, counted across
 * restarts), or the first one after it at which no step closure of any invocation runs and no finished one waits for
 * Restate to acknowledge its result (concurrent children): a kill then cuts no step in flight, so every finished step
 * stays finished.
 */
export interface KillPlan {
  killAt: number
  /**
   * A poison step: whenever the closure of a step whose name contains this text runs (live or again after a crash),
   * the process exits with code 1 shortly after, as a crash in a dependency would, on every attempt. Each crash is
   * appended to `<file>.crashes`.
   */
  crashInStep?: string
}

/** How long a poisoned step runs before its process exits: its run command, and what came before it, reach Restate. */
const CRASH_DELAY_MS = 20

/**
 * Test-only crash injection. With `ZIDANE_TEST_KILL_PLAN=<file>` holding a `KillPlan`, every live journal boundary
 * (a step about to be issued, every step before it journaled) is appended to `<file>.boundaries`; at the planned one
 * the process kills itself with SIGKILL, once (`<file>.fired`). A plan's `crashInStep` makes the process exit inside
 * that step every time it runs. Without the variable it returns no option at all.
 */
export function boundaryProbe(file: string | undefined = loadServicesConfig().killPlanFile): { onBoundary?: (key: StepKey) => void; replayTracker?: ReplayTracker } {
  if (!file) return {}
  const tracker = createReplayTracker()
  // The runtime marks its tracker live inside every step closure it lets run (after its crash guard): where a step runs.
  return { onBoundary: key => recordBoundary(file, key), replayTracker: { ...tracker, markLive: () => { tracker.markLive(); crashInPoisonedStep(file) } } }
}

function recordBoundary(file: string, key: StepKey): void {
  const log = `${file}.boundaries`
  appendFileSync(log, `${key.name}\n`)
  if (!existsSync(file) || existsSync(`${file}.fired`)) return
  const plan = readPlan(file)
  const reached = readFileSync(log, 'utf8').split('\n').filter(Boolean).length
  if (plan.killAt <= 0 || reached < plan.killAt || runningStepClosures() > 0 || unacknowledgedSteps() > 0) return
  writeFileSync(`${file}.fired`, key.name)
  process.kill(process.pid, 'SIGKILL')
}

function crashInPoisonedStep(file: string): void {
  const step = currentStep()
  const poison = existsSync(file) ? readPlan(file).crashInStep : undefined
  if (!poison || !step?.includes(poison)) return
  appendFileSync(`${file}.crashes`, `${step}\n`)
  setTimeout(() => process.exit(1), CRASH_DELAY_MS)
}

function readPlan(file: string): KillPlan {
  return JSON.parse(readFileSync(file, 'utf8')) as KillPlan
}

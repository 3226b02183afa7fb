import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import type { StepKey } from 'zidane/durable'
import type { RestateRuntimeOptions } from 'zidane/restate'

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

/** A finished step unacknowledged for longer belongs to an attempt that ended without the acknowledgement: not counted. */
const ACKNOWLEDGEMENT_WINDOW_MS = 5_000

/**
 * Crash injection for the services of a test (`test/helpers/services-with-probe.ts`), as runtime options of every
 * agent run of the process. With `file` holding a `KillPlan`, every live journal boundary (a step about to be issued,
 * every step before it journaled) is appended to `<file>.boundaries`; at the planned one the process kills itself with
 * SIGKILL, once (`<file>.fired`). A plan's `crashInStep` makes the process exit inside that step every time it runs.
 */
export function boundaryProbe(file: string): Pick<RestateRuntimeOptions, 'onBoundary' | 'stepObserver'> {
  let running = 0
  const unacknowledged = new Map<object, number>()
  const awaitAcknowledgement = (): (() => void) => {
    const token = {}
    unacknowledged.set(token, performance.now())
    return () => { unacknowledged.delete(token) }
  }
  const inFlight = (): boolean => {
    const now = performance.now()
    for (const [token, finishedAt] of unacknowledged) if (now - finishedAt >= ACKNOWLEDGEMENT_WINDOW_MS) unacknowledged.delete(token)
    return running > 0 || unacknowledged.size > 0
  }
  return {
    onBoundary: key => recordBoundary(file, key, inFlight),
    stepObserver: {
      started: (step) => {
        running++
        crashInPoisonedStep(file, step)
      },
      ended: () => {
        running--
        return awaitAcknowledgement()
      },
      intentRecorded: awaitAcknowledgement,
    },
  }
}

function recordBoundary(file: string, key: StepKey, inFlight: () => boolean): void {
  const log = `${file}.boundaries`
  appendFileSync(log, `${key.name}\n`)
  if (!existsSync(file) || existsSync(`${file}.fired`)) return
  const plan = readPlan(file)
  const reached = readFileSync(log, 'utf8').split('\n').filter(Boolean).length
  if (plan.killAt <= 0 || reached < plan.killAt || inFlight()) return
  writeFileSync(`${file}.fired`, key.name)
  process.kill(process.pid, 'SIGKILL')
}

function crashInPoisonedStep(file: string, step: string): void {
  const poison = existsSync(file) ? readPlan(file).crashInStep : undefined
  if (!poison || !step.includes(poison)) return
  appendFileSync(`${file}.crashes`, `${step}\n`)
  setTimeout(() => process.exit(1), CRASH_DELAY_MS)
}

function readPlan(file: string): KillPlan {
  return JSON.parse(readFileSync(file, 'utf8')) as KillPlan
}

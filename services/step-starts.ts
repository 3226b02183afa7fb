import { join } from 'node:path'
import { createFileStartLog } from 'zidane/restate'
import type { StepStartLog } from 'zidane/restate'
import { loadServicesConfig } from './config'

/** The folder of the start marks of unsafe tool calls, under the workspace root every replica shares. */
export const STEP_STARTS_FOLDER = '.step-starts'

let log: StepStartLog | undefined

/**
 * This process's start log of at-most-once steps (`RestateRuntimeOptions.startLog`): on the shared workspace root,
 * so the replica that runs a retry sees the marks the killed one left. Created on first use.
 */
export function stepStartLog(): StepStartLog {
  log ??= createFileStartLog(join(loadServicesConfig().workspaceRoot, STEP_STARTS_FOLDER))
  return log
}

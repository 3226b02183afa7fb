import { join } from 'node:path'
import { createFileCrashLog } from 'zidane/restate'
import type { RestateRuntimeOptions } from 'zidane/restate'
import { loadServicesConfig } from './config'

/** The folder of the crash counts of running steps, under the workspace root every replica shares. */
export const STEP_CRASHES_FOLDER = '.step-crashes'

let guard: Pick<RestateRuntimeOptions, 'crashGuard'> | undefined

/**
 * This process's crash guard of the agent runs' steps (`RestateRuntimeOptions.crashGuard`): a step that
 * `ZIDANE_MAX_STEP_CRASHES` attempts ended in (the process died in it) fails its run instead of crashing the process
 * again. None when the setting is 0. Its counts live on the shared workspace root, so the replica that runs a retry
 * sees the counts the dead one left. Created on first use.
 */
export function stepCrashGuard(): Pick<RestateRuntimeOptions, 'crashGuard'> {
  if (guard) return guard
  const config = loadServicesConfig()
  guard = config.maxStepCrashes === undefined ? {} : { crashGuard: { log: createFileCrashLog(join(config.workspaceRoot, STEP_CRASHES_FOLDER)), maxCrashes: config.maxStepCrashes } }
  return guard
}

import { join } from 'node:path'
import { createFileCrashLog } from 'zidane/restate'
import type { RestateRuntimeOptions } from 'zidane/restate'
import type { ServicesConfig } from './config'

/** The folder of the crash counts of running steps, under the workspace root every replica shares. */
export const STEP_CRASHES_FOLDER = '.step-crashes'

/**
 * The crash guard of the agent runs' steps (`RestateRuntimeOptions.crashGuard`): a step that `maxStepCrashes`
 * attempts ended in (the process died in it) fails its run instead of crashing the process again. None when the
 * setting is off. Its counts live on the shared workspace root, so the replica that runs a retry sees the counts the
 * dead one left.
 */
export function stepCrashGuard(config: Pick<ServicesConfig, 'maxStepCrashes' | 'workspaceRoot'>): Pick<RestateRuntimeOptions, 'crashGuard'> {
  if (config.maxStepCrashes === undefined) return {}
  return { crashGuard: { log: createFileCrashLog(join(config.workspaceRoot, STEP_CRASHES_FOLDER)), maxCrashes: config.maxStepCrashes } }
}

import { join } from 'node:path'

/** How the services process shuts down and cleans up after itself, read from the environment (documented in docs/configuration.md). */
export interface ShutdownConfig {
  /** `ZIDANE_SHUTDOWN_GRACE_MS`: how long running steps may take to finish after SIGTERM/SIGINT. Default 30000. */
  graceMs: number
  /**
   * `ZIDANE_COMMANDS_DIR`: where the running shell commands are recorded, so the next process stops those a killed one
   * left. A folder on this host. Default `<workspace root>/.running-commands`.
   */
  commandsDir: string
}

/** Default grace of a shutdown. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000

/** Reads `ShutdownConfig` from `env`; `workspaceRoot` places the default commands folder. */
export function loadShutdownConfig(workspaceRoot: string, env: NodeJS.ProcessEnv = process.env): ShutdownConfig {
  return {
    graceMs: shutdownGraceMs(env),
    commandsDir: env.ZIDANE_COMMANDS_DIR || join(workspaceRoot, '.running-commands'),
  }
}

/** `ZIDANE_SHUTDOWN_GRACE_MS` from `env`, or the default when unset or not a non-negative number. */
export function shutdownGraceMs(env: NodeJS.ProcessEnv = process.env): number {
  const grace = env.ZIDANE_SHUTDOWN_GRACE_MS ? Number(env.ZIDANE_SHUTDOWN_GRACE_MS) : Number.NaN
  return Number.isFinite(grace) && grace >= 0 ? grace : DEFAULT_SHUTDOWN_GRACE_MS
}

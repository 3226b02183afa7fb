import type { StackConfig } from '../../scripts/stack/stack-config'
import { startStack } from '../../scripts/stack/start-stack'
import type { RunningStack } from '../../scripts/stack/start-stack'
import type { ProcessHandle } from '../../scripts/stack/supervisor'

/** A stack whose last 40 output lines are kept for a failure's report. */
export interface KeptStack { stack: RunningStack; output: () => string; stop: () => Promise<void> }

/** Starts the stack of `config` with `env`, keeping its last lines; a failed start stops what had started. */
export async function startKeptStack(config: StackConfig, env: NodeJS.ProcessEnv): Promise<KeptStack> {
  const lines: string[] = []
  const keep = (name: string, line: string): void => { lines.push(`[${name}] ${line}`); if (lines.length > 40) lines.shift() }
  const processes: ProcessHandle[] = []
  const stop = async (): Promise<void> => { for (const handle of [...processes].reverse()) await handle.stop() }
  const stack = await startStack(config, reason => { process.stderr.write(`[bench] stack failed: ${reason}\n`) }, env, keep, processes).catch(async (error: unknown) => {
    await stop()
    throw error
  })
  return { stack, output: () => lines.join('\n'), stop }
}

import type { Hookable } from 'hookable'
import type { AgentHooks } from './types'

/** Where a hook that was fired without waiting reports its failure: the first one fails the run at its next boundary. */
export interface HookFailureSink {
  hookFailure?: string
}

/**
 * Calls hook `name` without waiting for it (streamed deltas, notices). A throwing or rejecting hook never becomes an
 * unhandled rejection (which would end the process); it is kept on `sink` and the loop fails the run at the next turn
 * boundary with status `error`.
 */
export function fireHook<N extends keyof AgentHooks>(hooks: Hookable<AgentHooks>, sink: HookFailureSink, name: N, ...args: Parameters<AgentHooks[N]>): void {
  const report = (error: unknown): void => {
    sink.hookFailure ??= `hook ${name} failed: ${error instanceof Error ? error.message : String(error)}`
  }
  try {
    void Promise.resolve(hooks.callHook(name, ...args)).catch(report)
  } catch (error) {
    report(error)
  }
}

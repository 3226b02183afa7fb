import type { Hookable } from 'hookable'
import type { AgentHooks } from './types'

/**
 * Where a hook that was fired without waiting reports its failure: the first one fails the run at its next boundary,
 * unless the run is durable (see {@link hookFailureEnds}).
 */
export interface HookFailureSink {
  hookFailure?: string
}

/**
 * Whether a failed hook ends the run. Not on a durable runtime: such a hook fires inside steps (`model:delta`,
 * `tool:resuming`, `replay:done`) only when they run live, never when they replay, and the failure settles whenever its
 * promise does. A run that stopped for it on one attempt would take another path on the next (a journal mismatch on
 * Restate), so a durable run logs the failure once and goes on.
 */
export function hookFailureEnds(runtime: { durable: boolean }, sink: HookFailureSink & { hookFailureLogged?: boolean }): boolean {
  if (sink.hookFailure === undefined) return false
  if (!runtime.durable) return true
  if (!sink.hookFailureLogged) console.warn(`[zidane] ${sink.hookFailure} (a durable run goes on: hooks never change its course)`)
  sink.hookFailureLogged = true
  return false
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

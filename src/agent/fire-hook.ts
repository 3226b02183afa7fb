import { Hookable } from 'hookable'
import type { HookCallback } from 'hookable'
import type { AgentHooks } from './types'

/** A hook name of {@link AgentHooks}. */
type HookName = keyof AgentHooks

/**
 * The agent's hook registry: hookable's, with one change on the hot path. `callHook` calls the hooks of a name in
 * order, awaiting each that returns a promise, as hookable does, but without wrapping each call in
 * `console.createTask` (DevTools' async stack tagging), which cost more than the rest of a hook call: about 10 µs a
 * call in the loop's profile (`bench/profile-loop.ts`). `beforeEach`/`afterEach` spies still see every call.
 */
export class AgentHookable extends Hookable<AgentHooks> {
  override callHook<N extends HookName>(name: N, ...args: Parameters<AgentHooks[N]>): Promise<void> | void {
    // Most names have no hook: hookable would still copy an empty list and build the call's spy event.
    if (!this.listens(name)) return undefined
    return this.callHookWith(callInOrder, name, args)
  }

  /**
   * Whether calling hook `name` reaches anyone: a hook registered under it, or a `beforeEach`/`afterEach` spy. Lets a
   * caller skip building a payload nobody reads. True whenever hookable's registry cannot be read.
   */
  listens(name: HookName): boolean {
    const internals = this as unknown as { _hooks?: unknown; _before?: unknown; _after?: unknown }
    if (internals._before !== undefined || internals._after !== undefined) return true
    const registry = internals._hooks
    // hookable keeps its hooks in a plain object by name; anything else is a version we do not know: call through.
    if (registry === null || typeof registry !== 'object' || Object.getPrototypeOf(registry) !== Object.prototype) return true
    const hooks: unknown = (registry as Record<string, unknown>)[name]
    return hooks !== undefined && (!Array.isArray(hooks) || hooks.length > 0)
  }
}

/** Calls `hooks` one after the other from `start`: synchronously while they return no promise (hookable's order). */
function callInOrder(hooks: HookCallback[], args: unknown[], _name?: string, start = 0): Promise<void> | undefined {
  for (let index = start; index < hooks.length; index++) {
    try {
      const result = (hooks[index] as HookCallback)(...args) as unknown
      if (isThenable(result)) return Promise.resolve(result).then(() => callInOrder(hooks, args, _name, index + 1))
    } catch (error) {
      return Promise.reject(error)
    }
  }
  return undefined
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function'
}

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
 * boundary with status `error`. A call that nobody listens to, or whose hooks all returned synchronously, allocates
 * no promise.
 */
export function fireHook<N extends HookName>(hooks: Hookable<AgentHooks>, sink: HookFailureSink, name: N, ...args: Parameters<AgentHooks[N]>): void {
  try {
    const result: unknown = hooks.callHook(name, ...args)
    if (result !== undefined) void Promise.resolve(result).catch((error: unknown) => { reportFailure(sink, name, error) })
  } catch (error) {
    reportFailure(sink, name, error)
  }
}

function reportFailure(sink: HookFailureSink, name: string, error: unknown): void {
  sink.hookFailure ??= `hook ${name} failed: ${error instanceof Error ? error.message : String(error)}`
}

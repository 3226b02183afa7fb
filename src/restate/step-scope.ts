import { AsyncLocalStorage } from 'node:async_hooks'
import { ConfigurationError } from '../errors/zidane-error'
import type { RestateContextLike, RestateRunOptions } from './types'

/** The step whose closure the current async call chain runs in, if any. */
const stepScope = new AsyncLocalStorage<string>()

/** Error code of a Restate context call made from inside a step's closure. Stable: clients match on it. */
export const CONTEXT_IN_STEP_CODE = 'restate_context_in_step'

let runningClosures = 0

/**
 * Runs `body` as the closure of step `stepName`: every guarded context call made from it throws.
 *
 * The scope is switched off whenever no closure runs in the process: on Node 22, while an `AsyncLocalStorage` is
 * enabled, Node runs a hook on every promise the process creates, and an agent's loop creates many between its
 * steps (on Node 24 and later the storage needs no hooks, and switching it off changes nothing). The cost: work a
 * closure leaves running after it has returned (a timer, a promise nobody awaits) is guarded only while some other
 * closure of the process runs, so such a call may slip into the journal instead of throwing. Calls made while the
 * closure runs, from anywhere in its own chain of awaits, always throw.
 */
export function runInStep<T>(stepName: string, body: () => Promise<T>): Promise<T> {
  runningClosures++
  return stepScope.run(stepName, body).finally(() => {
    runningClosures--
    if (runningClosures === 0) stepScope.disable()
  })
}

/**
 * Throws when called from inside a step's closure. A context call there (state, clock, ids, awakeables, another
 * step) lands in the journal only on the attempt that runs the closure, so the next replay diverges (RT0016).
 */
export function assertOutsideStep(operation: string): void {
  const step = stepScope.getStore()
  if (step === undefined) return
  throw new ConfigurationError(
    `${operation} was called inside the closure of step "${step}". A step's closure may not use the Restate context (state, clock, ids, awakeables, other steps): read what it needs before the step and write its results after it resolves.`,
    CONTEXT_IN_STEP_CODE,
  )
}

/** True for the error `assertOutsideStep` throws: a programming error that must fail the run, never become a tool result. */
export function isContextInStepError(error: unknown): boolean {
  return error instanceof ConfigurationError && error.code === CONTEXT_IN_STEP_CODE
}

const GUARDED_GROUPS = new Set(['date', 'rand'])

/**
 * Wraps `ctx` so every method call, including `ctx.date.*` and `ctx.rand.*`, first checks that no step closure is
 * running. Property reads (`key`) pass through. The wrapper is what the runtime and its stores hold, so a store or
 * tool that reaches the context from inside a step fails loudly instead of corrupting the journal. `onCall` is told
 * the name of each method called on the context itself (not of `ctx.date` or `ctx.rand`), before it runs.
 */
export function guardContext<C extends RestateContextLike>(ctx: C, onCall?: (method: string) => void): C {
  const wrappers = new WeakMap<object, unknown>()
  const groups = new Map<PropertyKey, { group: object; proxy: object }>()
  const wrapGroup = (name: string, group: object): object => {
    const groupWrappers = new WeakMap<object, unknown>()
    return new Proxy(group, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver)
        if (typeof value !== 'function') return value
        return guardedMethod(groupWrappers, `ctx.${name}.${String(property)}()`, target, value as GuardedMethod)
      },
    })
  }
  return new Proxy(ctx, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target)
      if (typeof property === 'string' && GUARDED_GROUPS.has(property) && value !== null && typeof value === 'object') {
        const known = groups.get(property)
        if (known?.group === value) return known.proxy
        const proxy = wrapGroup(property, value)
        groups.set(property, { group: value, proxy })
        return proxy
      }
      if (typeof value !== 'function') return value
      if (property === 'isProcessing') return guardedMethod(wrappers, '', target, value as GuardedMethod, undefined, false)
      return guardedMethod(wrappers, `ctx.${String(property)}()`, target, value as GuardedMethod, onCall && (() => { onCall(String(property)) }))
    },
  })
}

type GuardedMethod = (...args: unknown[]) => unknown

/**
 * The wrapper of `method` (called on `target`) that first checks no step closure is running, then tells `called` (with
 * `guarded` false, `method` bound to `target`, for a read a closure may make); one per method, kept in
 * `wrappers`, since the loop reaches the context many times per turn. Keyed by the function, so a method replaced on
 * the context gets a wrapper of its own.
 */
function guardedMethod(wrappers: WeakMap<object, unknown>, label: string, target: object, method: GuardedMethod, called?: () => void, guarded = true): unknown {
  const known = wrappers.get(method)
  if (known !== undefined) return known
  const wrapper = guarded
    ? (...args: unknown[]): unknown => {
        assertOutsideStep(label)
        called?.()
        return method.apply(target, args)
      }
    : method.bind(target)
  wrappers.set(method, wrapper)
  return wrapper
}

/**
 * `ctx.run(name, action)` whose closure runs as a step: guarded context calls made from inside it throw. Returns the
 * SDK's promise untouched (a `RestatePromise` stays one, so it can be joined by the durable combinators).
 */
export function journalStep<T>(ctx: RestateContextLike, name: string, action: () => T | Promise<T>, runOptions?: RestateRunOptions): Promise<T> {
  return ctx.run(name, () => runInStep(name, async () => action()), runOptions)
}

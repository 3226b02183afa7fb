import type { AwakeableOutcome } from '../durable/runtime'
import { ConfigurationError } from '../errors/zidane-error'
import type { RestateAwakeable, RestateContextLike } from './types'
import { isRestatePromiseLike } from './types'

/**
 * Structural subset of the SDK's `RestatePromise` statics used by `awakeableWithTimeout`. Pass `RestatePromise`
 * so the race is journaled; native `Promise.race` over durable promises is not supported. Method syntax keeps the
 * SDK's generic `race` assignable.
 */
export interface RestatePromiseRaceLike<TPromise extends Promise<unknown> = Promise<unknown>> {
  /** Resolves with the first of `values` to settle. */
  race(values: readonly TPromise[]): Promise<unknown>
}

/** Options for `awakeableWithTimeout` and `raceWithTimeout`; `TPromise` is the promise type `promises.race` takes. */
export interface AwakeableWithTimeoutOptions<TPromise extends Promise<unknown> = Promise<unknown>> {
  /** Durable race combinator: pass `RestatePromise`. Required whenever `timeoutMs` is positive. */
  promises?: RestatePromiseRaceLike<TPromise> | undefined
  /** Durable deadline in milliseconds. Unset / non-positive = no timeout. */
  timeoutMs?: number | undefined
}

/** Transforms `promise` without awaiting it: `RestatePromise.map` keeps it a durable, joinable promise. */
export function mapPromise<T, U>(promise: Promise<T>, mapper: (value: T) => U): Promise<U> {
  if (isRestatePromiseLike(promise)) return promise.map(value => mapper(value as T))
  return promise.then(mapper)
}

/**
 * Mint an awakeable that resolves `{ timedOut: false, value }` with the resumer's payload, or `{ timedOut: true }`
 * when `timeoutMs` elapses first. The id is journal-stable; the timeout is a durable `ctx.sleep`. The race is armed
 * at once: await `promise` before any other durable operation.
 */
export function awakeableWithTimeout<T, TPromise extends Promise<unknown> = Promise<unknown>>(ctx: RestateContextLike, options: AwakeableWithTimeoutOptions<TPromise> = {}): RestateAwakeable<AwakeableOutcome<T>> {
  const awakeable = ctx.awakeable<T>()
  return { id: awakeable.id, promise: raceWithTimeout(ctx, awakeable.promise, options) }
}

/**
 * Race an already-minted awakeable promise against a durable `ctx.sleep(timeoutMs)`. Split out so a caller that
 * runs journaled steps between minting and parking can arm the race at park time (an armed race and an awaited
 * `ctx.run` are two waiters on the SDK's single-waiter channel). Without a positive `timeoutMs` the promise is only
 * tagged; with one, `options.promises` is required.
 */
export function raceWithTimeout<T, TPromise extends Promise<unknown> = Promise<unknown>>(ctx: RestateContextLike, promise: Promise<T>, options: AwakeableWithTimeoutOptions<TPromise> = {}): Promise<AwakeableOutcome<T>> {
  const tagged = mapPromise(promise, (value): AwakeableOutcome<T> => ({ timedOut: false, value }))
  const timeoutMs = options.timeoutMs ?? 0
  if (!(timeoutMs > 0)) return tagged
  if (!options.promises) throw new ConfigurationError('raceWithTimeout: a positive timeoutMs needs `promises: RestatePromise`; native Promise.race over durable promises is not supported.', 'restate_promises_required')
  const timer = mapPromise(ctx.sleep(timeoutMs), (): AwakeableOutcome<T> => ({ timedOut: true }))
  // Both are the context's own promises (RestatePromise under the SDK), which is what TPromise stands for.
  return options.promises.race([tagged, timer] as unknown as readonly TPromise[]) as Promise<AwakeableOutcome<T>>
}

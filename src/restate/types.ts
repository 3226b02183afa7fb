/**
 * Structural slices of the `@restatedev/restate-sdk` context the adapter uses. Structural on purpose:
 * `zidane/restate` never imports the SDK at run time, and tests can drive it with a hand-written fake.
 */

/**
 * Subset of `restate.Context.run` options used by the adapter.
 * The SDK's full signature accepts a richer options bag; this captures what the adapter exercises.
 */
export interface RestateRunOptions {
  /** Max retry attempts before surfacing a terminal error. */
  maxRetryAttempts?: number
  /** Max retry duration before surfacing a terminal error. */
  maxRetryDuration?: unknown
  /** Initial delay before the first retry. */
  initialRetryInterval?: unknown
  /** Maximum delay between retries. */
  maxRetryInterval?: unknown
  /** Exponential factor applied to retry intervals. */
  retryIntervalFactor?: number
  /** Optional SDK serde passthrough for callers that need custom journal encoding. */
  serde?: unknown
}

/** `ctx.run` options of every adapter entry unless the caller passes its own: one attempt, a failure is recorded. */
export const DEFAULT_RUN_OPTIONS: Readonly<RestateRunOptions> = { maxRetryAttempts: 1 }

/**
 * Awakeable handle returned by `RestateContextLike.awakeable`. The SDK returns a `RestatePromise<T>`; we narrow
 * to the `Promise<T>` it extends.
 */
export interface RestateAwakeable<T> {
  /** Journal-stable id. Send it to whatever resolves the awakeable. */
  readonly id: string
  /** Settles when the awakeable is resolved or rejected. */
  readonly promise: Promise<T>
}

/**
 * Structural subset of `restate.Context` covering everything the adapter needs. `run` journals one side effect;
 * `date.now()` is journaled; `rand.uuidv4()` is seeded from the invocation id; `awakeable()` mints a journal-stable
 * id paired with a pending promise that another party resolves.
 */
export interface RestateContextLike {
  /** Journals the result of one side effect. On replay the journaled value is returned and `fn` does not run again. */
  run<T>(name: string, fn: () => T | Promise<T>, options?: RestateRunOptions): Promise<T>
  /** Durable timer: suspends the invocation for `millis` and survives process death. */
  sleep(millis: number): Promise<void>
  /** Durable clock. `now()` resolves to epoch milliseconds, the same on replay. */
  readonly date: { now: () => Promise<number> }
  /** Deterministic random source seeded from the invocation id. */
  readonly rand: { uuidv4: () => string }
  /** Creates an awakeable: a journal-stable id and a promise that waits for an outside resolver. */
  awakeable<T>(): RestateAwakeable<T>
  /** Resolve another invocation's awakeable (the resumer side). */
  resolveAwakeable?<T>(id: string, payload?: T): void
  /**
   * The SDK's internal `ContextInternal.isProcessing()`: false while the VM replays journaled commands.
   * `restateRuntime` reads it right before issuing a step's run command to tell a step an earlier attempt
   * started (and was cut off inside) from a fresh one.
   */
  isProcessing?(): boolean
  /**
   * The invocation being handled (`id`: its invocation id, the same on every attempt; `attemptCompletedSignal`:
   * aborted when this attempt ends, whatever ended it).
   */
  request?(): { readonly id: string; readonly attemptCompletedSignal?: AbortSignal }
}

/** Structural subset of `restate.ObjectContext`: keyed K/V state of the bound virtual-object instance. */
export interface RestateObjectContextLike extends RestateContextLike {
  /** Key of the virtual-object instance the handler is bound to. */
  readonly key: string
  /** Reads a state value. Resolves to `null` when the key is missing. */
  get<T>(name: string): Promise<T | null>
  /** Writes a state value. The SDK journals the change. */
  set<T>(name: string, value: T): void
  /** Removes a state key. */
  clear(name: string): void
}

/** A promise that also exposes the SDK `map` combinator (`RestatePromise`). */
export type RestatePromiseLike<T> = Promise<T> & { map: <U>(mapper: (value?: T, failure?: unknown) => U) => Promise<U> }

/** Whether a detached background task survives the worker that started it (`'durable'`) or not. */
export type DetachedTasksCapability = 'none' | 'process' | 'durable'

/** True when `promise` carries the SDK's `map` combinator (it is a `RestatePromise`). */
export function isRestatePromiseLike<T>(promise: Promise<T>): promise is RestatePromiseLike<T> {
  return typeof (promise as Partial<RestatePromiseLike<T>>).map === 'function'
}

/** True when `ctx` has virtual-object state. */
export function isObjectContext(ctx: RestateContextLike): ctx is RestateObjectContextLike {
  const candidate = ctx as Partial<RestateObjectContextLike>
  if (typeof candidate.get !== 'function' || typeof candidate.set !== 'function') return false
  try {
    return typeof candidate.key === 'string'
  } catch {
    return false // the SDK's `key` getter throws on plain service contexts
  }
}

import type { JsonValue } from '../json'
import type { DurableAwakeable, DurableRuntime, RuntimeStores, StepAttempt, StepKey, StepKind, StepOptions } from '../durable/runtime'
import { createMemoryToolStateStore } from '../durable/memory-tool-state-store'
import { ConfigurationError, DurableError } from '../errors/zidane-error'
import { createMemorySessionStore } from '../session/memory-session-store'
import type { SessionStore } from '../session/types'
import { raceWithTimeout } from './awakeable'
import type { RestatePromiseRaceLike } from './awakeable'
import { createCoalescedClock, createReadingClock, deterministicUuid } from './clock'
import type { ReadingClock } from './clock'
import { isRestateCancellation, isRestateControlError } from './errors'
import type { ReplayTracker } from './replay'
import { takeSuspectTurn } from './crash-log'
import type { StepCrashLog } from './crash-log'
import { restateSessionStore } from './session'
import { AtMostOnceStep, createIntentGate, issueEffects } from './step-intent'
import { createStepAnchors } from './step-anchors'
import type { StepAnchors } from './step-anchors'
import { restateToolStateStore } from './tool-state'
import { assertOutsideStep, guardContext, isContextInStepError, runInStep } from './step-scope'
import type { RestateContextLike, RestateRunOptions } from './types'
import { DEFAULT_RUN_OPTIONS, isObjectContext, isRestatePromiseLike } from './types'

/**
 * The SDK `RestatePromise` statics the runtime uses. Method syntax on purpose: it keeps the SDK's generic
 * signatures assignable, so `promises: RestatePromise` typechecks.
 */
export interface RestateCombinators extends RestatePromiseRaceLike {
  /** Resolves with every value once all have settled. */
  all(values: readonly Promise<unknown>[]): Promise<unknown>
  /** Settles once every value has settled. */
  allSettled?(values: readonly Promise<unknown>[]): Promise<unknown>
}

/** Options for `restateRuntime`. */
export interface RestateRuntimeOptions {
  /**
   * Coalesce `now()`: one journaled anchor every `reanchorEvery` reads (`true`: every 8). Default: every read is
   * journaled, except a read right after the default session store's stamp with no context call between but state
   * writes: it answers that stamp's reading (the two would differ by microseconds and cost a round trip each). Whatever
   * this says, the default session store stamps its header timestamps (`createdAt` / `updatedAt`) from a coalesced
   * clock: when this is off, one anchor every 8 stamps, the anchor the runtime's reading when one was just made (see
   * `createReadingClock`); the runtime's when on. Those stamps need to be ordered and replay-stable, not wall-accurate.
   */
  coalesce?: boolean | { reanchorEvery?: number }
  /** Entropy of the `uuid()` sequence. Default: one `ctx.rand.uuidv4()` draw at construction. */
  idSeed?: string
  /** Durable combinators: pass `RestatePromise`. Without them, steps run one at a time. */
  promises?: RestateCombinators
  /**
   * Called right before a step's run command is issued live (not on replay): every step before it is journaled.
   * A journal boundary a test can stop the process at; keep it synchronous and cheap. Not called for an at-most-once
   * step anchored on earlier steps (`StepOptions.after`): stopping there cannot be told from stopping inside it.
   */
  onBoundary?: (key: StepKey) => void
  /** Per-invocation replay tracker: marked live the first time a step's closure actually runs. */
  replayTracker?: ReplayTracker
  /** Told when step closures run and when Restate acknowledged their results (crash tests); see {@link StepObserver}. */
  stepObserver?: StepObserver
  /** Resolve an awakeable of another invocation (e.g. an ingress client). Default: `ctx.resolveAwakeable`. */
  resolveAwakeable?: (id: string, value: JsonValue) => void | Promise<void>
  /**
   * Journal an intent before each at-most-once step (unsafe tool calls): one `ctx.run` named `intent:<step name>`,
   * awaited before the step's own, so a retry that finds the intent without the step's result reports the step
   * `resumed` (it may have started) even when the attempt died as the step started, before Restate journaled its run
   * command. Costs one more journal entry and round trip per such step. Default true; `false` gives the journal of
   * releases before intents, and such a step killed as it starts may then run again as new.
   */
  stepIntents?: boolean
  /**
   * Ends a run whose step keeps ending the attempts that run it (an out-of-memory tool, a crash in a dependency: the
   * process dies in it every time) instead of retrying it for as long as Restate retries the invocation. `log` counts,
   * outside the journal, the attempts that ended while each step ran (`createFileCrashLog` on a folder every replica
   * sees); a step that `maxCrashes` of them ended in is not run again: its closure throws a `step_crashed` error
   * naming it, which fails the run for good. A step an earlier attempt ended in runs again only when no other such
   * step runs in this process (waiting at most `suspectWaitMs`, default 60 s), so the crash that follows is counted
   * against it, not against another run's step caught in the same crash. Without it a crashing step is bounded only
   * by the invocation's retry policy, which counts every attempt of every invocation the process was running.
   */
  crashGuard?: { log: StepCrashLog; maxCrashes: number; suspectWaitMs?: number }
  /**
   * Let an at-most-once step issued right after the steps that decided it (`StepOptions.after`) use their journaled
   * results as its intent, instead of an intent entry of its own. Default true. `false` journals every such step's
   * intent: one more entry and round trip per unsafe call, for a narrower window in which a crash reports a call that
   * never started as interrupted (see `src/restate/README.md`, rule 8).
   */
  anchoredIntents?: boolean
  /**
   * Journal the calls of a turn that are all `replay: 'safe'` with the next model step, in one entry and one round trip
   * (`RuntimeDefaults.deferSafeCalls`). Default true; `false` gives each call a step of its own.
   */
  deferSafeCalls?: boolean
  /** `ctx.run` options of the step entries, by step kind. Default `{ maxRetryAttempts: 1 }`. */
  runOptions?: Partial<Record<StepKind, RestateRunOptions>>
  /**
   * Where sessions live. Default: `restateSessionStore(ctx)` on an object context (header timestamps from a coalesced
   * clock, see `coalesce`), else an in-memory store.
   */
  sessionStore?: SessionStore
}

/**
 * What a crash test needs to kill a process only where no step is in flight: told, synchronously, when a step's own
 * code starts in this process (after the crash guard let it) and when it ended, and given for each finished step (and
 * each at-most-once step's intent this attempt recorded) a function it calls once Restate has acknowledged the result
 * (an intent: once its effect settled) or the attempt ended. Keep it cheap; it never changes what is journaled.
 */
export interface StepObserver {
  started(step: string): void
  /** The step's closure returned or threw; the returned function is called once its result is acknowledged. */
  ended(step: string): () => void
  /** This attempt recorded the intent of at-most-once `step`; the returned function is called once its effect settled. */
  intentRecorded(step: string): () => void
}

/**
 * Largest tool result the Restate runtime journals (1 MiB): the loop keeps the head and tail of a larger one, so a
 * huge output can never hit Restate's 32 MiB entry limit (RT0003, retried forever). Set `behavior.persistDir` to keep
 * whole outputs in files.
 */
export const DEFAULT_MAX_TOOL_RESULT_BYTES = 1024 * 1024

const cancellationListeners = new WeakMap<DurableRuntime, Set<(error: unknown) => void>>()

/**
 * Registers `listener` for the Restate cancellation of the invocation behind `runtime`, as seen by the runtime's
 * combinators (`all` / `race` / `allSettled`). Returns an unregister function.
 */
export function onRuntimeCancelled(runtime: DurableRuntime, listener: (error: unknown) => void): () => void {
  const listeners = cancellationListeners.get(runtime) ?? new Set()
  cancellationListeners.set(runtime, listeners)
  listeners.add(listener)
  return () => { listeners.delete(listener) }
}

/**
 * Sees the Restate promise of each step a runtime issues, before anyone awaits it, and returns the promise handed out
 * in its place, which must settle as the step does. The deployment's steering check rides on it: it joins the step
 * with the inbox's signal in one combinator, so whether the signal fired before the step completed is decided by the
 * journal's order, not by a timer of its own (`services/agent-object/inbox-steering.ts`).
 */
export type StepWatcher = <T>(step: Promise<T>) => Promise<T>

const stepWatchers = new WeakMap<DurableRuntime, { watcher?: StepWatcher }>()

/**
 * Hands `watcher` the run promise of every step the Restate runtime `runtime` issues from now on (intents excluded).
 * Register it before the agent runs; a runtime `restateRuntime` did not build ignores it.
 */
export function watchSteps(runtime: DurableRuntime, watcher: StepWatcher): void {
  const watching = stepWatchers.get(runtime)
  if (watching) watching.watcher = watcher
}

/** Tells the listeners of `runtime` that `error` ended its invocation, when it is a Restate cancellation. */
export function notifyRuntimeCancelled(runtime: DurableRuntime, error: unknown): void {
  if (!isRestateCancellation(error)) return
  for (const listener of [...cancellationListeners.get(runtime) ?? []]) listener(error)
}

/**
 * The durable runtime of one Restate invocation. Build it inside the handler, once per invocation, and hand it to
 * the agent. Each step is one `ctx.run` entry, and an at-most-once step is preceded by one more, its intent (see
 * `stepIntents`); a step whose run command (or intent) an earlier attempt journaled but whose result it never did
 * (the attempt died inside it) runs again with `resumed: true`.
 *
 * Misuse is refused, not journaled: while a step's closure runs, every runtime method and every context call of the
 * runtime's stores throws a `ConfigurationError` (`restate_context_in_step`) naming the step.
 */
export function restateRuntime(rawCtx: RestateContextLike, options: RestateRuntimeOptions = {}): DurableRuntime {
  const reading = createReadingClock(() => ctx.date.now())
  const ctx = guardContext(rawCtx, method => { if (!CLOCK_NEUTRAL_CALLS.has(method)) reading.moved() })
  const idSeed = options.idSeed ?? ctx.rand.uuidv4()
  const clock = buildClock(ctx, options.coalesce, reading)
  const watching: { watcher?: StepWatcher } = {}
  let uuidCounter = 0
  const runtime: DurableRuntime = {
    kind: 'restate',
    durable: true,
    stores: buildStores(ctx, options, options.coalesce ? clock : createCoalescedClock(() => reading.now('store'))),
    defaults: { maxToolResultBytes: DEFAULT_MAX_TOOL_RESULT_BYTES, deferSafeCalls: options.deferSafeCalls ?? true },
    step: createStepper(ctx, options, watching),
    now: () => clock.now(),
    uuid: () => {
      assertOutsideStep('runtime.uuid()')
      return deterministicUuid(`${idSeed}:${uuidCounter++}`)
    },
    awakeable: <T>(_key: StepKey, awakeableOptions: { timeoutMs?: number } = {}) => mintAwakeable<T>(ctx, options, awakeableOptions.timeoutMs),
    resolveAwakeable: async (id, value) => resolveAwakeable(ctx, options, id, value),
    all: <T>(promises: readonly Promise<T>[]) => observe(runtime, joinSteps(options.promises, 'all', promises, joinInOrder)),
    race: <T>(promises: readonly Promise<T>[]) => observe(runtime, joinSteps(options.promises, 'race', promises, values => Promise.race(values))),
    allSettled: <T>(promises: readonly Promise<T>[]) => observe(runtime, joinSteps(options.promises, 'allSettled', promises, settleInOrder)),
    sleep: ms => ctx.sleep(ms),
    // A context call from inside a step is a bug in the caller's code: it fails the run instead of becoming a tool result.
    isControlError: error => isRestateControlError(error) || isContextInStepError(error),
  }
  stepWatchers.set(runtime, watching)
  return runtime
}

/** Context calls that take no time worth a clock read of its own: a reading made before them is still fresh after. */
const CLOCK_NEUTRAL_CALLS = new Set(['set', 'clear', 'clearAll', 'request'])

function buildClock(ctx: RestateContextLike, coalesce: RestateRuntimeOptions['coalesce'], reading: ReadingClock): { now(): Promise<number> } {
  if (!coalesce) {
    return {
      now: () => {
        assertOutsideStep('runtime.now()')
        return reading.now('runtime')
      },
    }
  }
  const coalesced = createCoalescedClock(() => ctx.date.now(), coalesce === true ? undefined : coalesce.reanchorEvery)
  return {
    now: () => {
      assertOutsideStep('runtime.now()') // a coalesced read may not touch the context, yet its order is journal-relevant
      return coalesced.now()
    },
  }
}

/**
 * The stores of `ctx`. The default session store stamps its header from `clock`: the runtime's own with `coalesce`,
 * else a coalesced clock anchored on the runtime's readings, so a stamp right after a run's start read costs no read.
 */
function buildStores(ctx: RestateContextLike, options: RestateRuntimeOptions, clock: { now(): Promise<number> }): RuntimeStores {
  if (!isObjectContext(ctx)) return { session: options.sessionStore ?? createMemorySessionStore(), toolState: createMemoryToolStateStore() }
  const session = options.sessionStore ?? restateSessionStore(ctx, { clock, ...(options.promises ? { promises: options.promises } : {}) })
  return { session, toolState: restateToolStateStore(ctx) }
}

/**
 * Builds `step`. The resumed bit is read right before the run command is issued: a VM still replaying at that
 * moment means an earlier attempt journaled this command; if the closure then runs, that attempt never completed it.
 * An at-most-once step learns it from its intent instead (see `createIntentGate`). Without combinators each step
 * waits for the previous one, so at most one journaled await is pending.
 */
function createStepper(ctx: RestateContextLike, options: RestateRuntimeOptions, watching: { watcher?: StepWatcher }): DurableRuntime['step'] {
  const intents = options.stepIntents === false ? undefined : createIntentGate(ctx, options.stepObserver)
  const anchors = options.stepIntents === false ? undefined : createStepAnchors(ctx, options.stepObserver)
  const issue = <T>(key: StepKey, execute: (attempt: StepAttempt) => Promise<T>, stepOptions?: StepOptions): Promise<T> => {
    assertOutsideStep(`runtime.step("${key.name}")`)
    const processing = isProcessing(ctx)
    const after = options.anchoredIntents !== false && stepOptions?.after !== undefined && stepOptions.after.length > 0 ? stepOptions.after : undefined
    // A step without anchors ends the earlier steps' time as anchors first: a planned kill may land before it.
    const settledRelease = after === undefined ? anchors?.issuing(undefined) : undefined
    // Not a boundary: stopping right before an anchored at-most-once step looks, in the journal, like stopping in it.
    const anchoredEffect = after !== undefined && anchors !== undefined && stepOptions?.atMostOnce === true
    if (processing && !anchoredEffect) options.onBoundary?.(key)
    const runOptions = options.runOptions?.[key.kind] ?? DEFAULT_RUN_OPTIONS
    const tracking = anchors ? { anchors, settled: settledRelease ?? anchors.issuing(after) } : undefined
    if (intents && anchors && stepOptions?.atMostOnce === true) {
      // Anchored: the anchors' journaled results stand for the intent. Not anchored: an intent entry of its own.
      if (after) {
        // An attempt that has ended issues nothing: a later attempt may already rely on its stop.
        if (anchors.ended) return new Promise<T>(() => undefined)
        return issueRun(ctx, options, watching, key, execute, runOptions, processing ? () => anchors.mayHaveStarted(after) : () => true, tracking)
      }
      return intents(key, resumed => issueRun(ctx, options, watching, key, execute, runOptions, resumed, tracking))
    }
    return issueRun(ctx, options, watching, key, execute, runOptions, () => !processing, tracking)
  }
  if (options.promises) return issue
  let tail: Promise<unknown> = Promise.resolve()
  // One at a time, a group's later steps are issued after its earlier ones settled: those join their anchors.
  const groups = new WeakMap<readonly StepKey[], StepKey[]>()
  return <T>(key: StepKey, execute: (attempt: StepAttempt) => Promise<T>, stepOptions?: StepOptions): Promise<T> => {
    const after = stepOptions?.after
    const before = after ? groups.get(after) ?? [] : []
    if (after) groups.set(after, [...before, key])
    const sequential = after && before.length > 0 ? { ...stepOptions, after: [...after, ...before] } : stepOptions
    const result = tail.then(() => issue(key, execute, sequential))
    tail = result.then(() => undefined, () => undefined)
    return result
  }
}

function isProcessing(ctx: RestateContextLike): boolean {
  return typeof ctx.isProcessing === 'function' ? ctx.isProcessing() : true
}

/**
 * Issues one step as a `ctx.run` whose closure reads `resumed()` (after the crash guard), telling the step observer
 * when its code runs and when its result is acknowledged.
 */
function issueRun<T>(ctx: RestateContextLike, options: RestateRuntimeOptions, watching: { watcher?: StepWatcher }, key: StepKey, execute: (attempt: StepAttempt) => Promise<T>, runOptions: RestateRunOptions, resumed: () => boolean | Promise<boolean>, tracking?: { anchors: StepAnchors; settled: () => void }): Promise<T> {
  const invocationId = options.crashGuard ? ctx.request?.().id : undefined
  const guard = invocationId === undefined || !options.crashGuard ? undefined : { ...options.crashGuard, invocationId }
  let acknowledged: (() => void) | undefined
  // Forgotten only after a closure this attempt ran: a step replayed from the journal left no count behind.
  let ran = false
  const run = ctx.run(key.name, () => runInStep(key.name, async () => {
    ran = true
    tracking?.anchors.ran(key.name)
    // The guard first: a step it refuses does not run, so the replay is not over either.
    const leaveGuard = guard ? await enterCrashGuard(guard, key.name) : undefined
    options.stepObserver?.started(key.name)
    try {
      options.replayTracker?.markLive()
      const wasResumed = resumed()
      const value = await execute({ resumed: typeof wasResumed === 'boolean' ? wasResumed : await wasResumed })
      tracking?.anchors.produced(key.name, value)
      return value
    } finally {
      leaveGuard?.()
      acknowledged = options.stepObserver?.ended(key.name)
    }
  }), runOptions)
  const result = watching.watcher ? watching.watcher(run) : run
  // An earlier attempt's stop mark names this step: the journaled value tells whether that attempt's result is the one kept.
  const watched = tracking?.anchors.watches(key.name) === true
  if (!guard && !options.stepObserver && !watched) return result
  const settled = (value?: unknown): void => {
    if (watched && !ran) tracking?.anchors.replayed(key.name, value)
    tracking?.settled()
    acknowledged?.()
    if (ran) guard?.log.forget(guard.invocationId, key.name).catch(() => undefined)
  }
  if (!isRestatePromiseLike(result)) {
    return result.then(value => {
      settled(value)
      return value
    }, (error: unknown) => {
      settled()
      throw error
    })
  }
  return result.map((value, failure) => {
    settled(failure === undefined ? value : undefined)
    if (failure !== undefined) throw failure
    return value as T
  })
}

/** Default of `crashGuard.suspectWaitMs`. */
const DEFAULT_SUSPECT_WAIT_MS = 60_000

/**
 * Counts this start of `step` in the crash log, after waiting for its turn when an earlier attempt ended in it;
 * throws `step_crashed` instead when `maxCrashes` attempts did. Resolves with the function that ends its turn.
 */
async function enterCrashGuard(guard: { log: StepCrashLog; maxCrashes: number; suspectWaitMs?: number; invocationId: string }, step: string): Promise<() => void> {
  const crashes = await guard.log.crashes(guard.invocationId, step)
  const leave = crashes > 0 ? await takeSuspectTurn(guard.suspectWaitMs ?? DEFAULT_SUSPECT_WAIT_MS) : () => undefined
  try {
    // Thrown inside the step: the SDK journals it as the step's terminal failure (the message is what survives).
    if (crashes >= guard.maxCrashes) throw new DurableError(`step_crashed: ${crashes} attempts ended while step ${step} ran (the process died in it, or the attempt was aborted); it is not run again.`, 'step_crashed')
    await guard.log.starting(guard.invocationId, step, crashes)
    return leave
  } catch (error) {
    leave()
    throw error
  }
}

function mintAwakeable<T>(ctx: RestateContextLike, options: RestateRuntimeOptions, timeoutMs: number | undefined): DurableAwakeable<T> {
  const awakeable = ctx.awakeable<T>()
  let armed: Promise<{ timedOut: false; value: T } | { timedOut: true }> | undefined
  return {
    id: awakeable.id,
    wait() {
      // Armed lazily: a built race already waits on the SDK's single-waiter channel.
      armed ??= (async () => raceWithTimeout(ctx, awakeable.promise, { timeoutMs, promises: options.promises }))()
      return armed
    },
  }
}

async function resolveAwakeable(ctx: RestateContextLike, options: RestateRuntimeOptions, id: string, value: JsonValue): Promise<void> {
  assertOutsideStep('runtime.resolveAwakeable()')
  if (options.resolveAwakeable) return options.resolveAwakeable(id, value)
  if (!ctx.resolveAwakeable) throw new ConfigurationError('restateRuntime: no resolveAwakeable option and the context cannot resolve awakeables.', 'restate_resolver_missing')
  ctx.resolveAwakeable(id, value)
}

type Combinator = 'all' | 'race' | 'allSettled'

/** {@link join}, after journaling the intents of the at-most-once steps among `promises` and issuing their effects. */
function joinSteps<T, R>(combinators: RestateCombinators | undefined, name: Combinator, promises: readonly Promise<T>[], fallback: (values: readonly Promise<T>[]) => Promise<R>): Promise<R> {
  if (!promises.some(promise => promise instanceof AtMostOnceStep)) return join(combinators, name, promises, fallback)
  assertOutsideStep(`runtime.${name}()`)
  const joinIntents = (intents: Promise<unknown>[]): Promise<unknown> => (combinators && intents.every(intent => isRestatePromiseLike(intent)) ? combinators.all(intents) : joinInOrder(intents))
  return issueEffects(promises, joinIntents).then(effects => join(combinators, name, effects as Promise<T>[], fallback))
}

/** Uses the durable combinator when every input is a `RestatePromise`; otherwise awaits them one at a time. */
function join<T, R>(combinators: RestateCombinators | undefined, name: Combinator, promises: readonly Promise<T>[], fallback: (values: readonly Promise<T>[]) => Promise<R>): Promise<R> {
  assertOutsideStep(`runtime.${name}()`)
  if (name === 'race') assertDeterministicRace(combinators, promises)
  if (!combinators || promises.length === 0 || !promises.every(promise => isRestatePromiseLike(promise))) return fallback(promises)
  if (name === 'all') return combinators.all(promises) as Promise<R>
  if (name === 'race') return combinators.race(promises) as Promise<R>
  return combinators.allSettled ? combinators.allSettled(promises) as Promise<R> : fallback(promises)
}

/**
 * A race over Restate promises is decided by the journal only through Restate's combinator: `Promise.race` would take
 * whichever settles first in this attempt, which a replay can see differently. So a race with a Restate promise needs
 * `promises: RestatePromise`, and one that mixes Restate promises with others is refused (the `all` and `allSettled`
 * fallbacks await in order, which is deterministic).
 */
function assertDeterministicRace(combinators: RestateCombinators | undefined, promises: readonly Promise<unknown>[]): void {
  const durable = promises.filter(promise => isRestatePromiseLike(promise)).length
  if (durable === 0) return
  if (!combinators) throw new ConfigurationError('runtime.race() over Restate promises needs `promises: RestatePromise`: a native race is decided by timing, not by the journal.', 'restate_promises_required')
  if (durable < promises.length) throw new ConfigurationError('runtime.race() cannot mix Restate promises with other promises: only a race of Restate promises is journaled.', 'restate_race_mixed')
}

async function joinInOrder<T>(promises: readonly Promise<T>[]): Promise<T[]> {
  // A later rejection is reported by its own await; RestatePromises are left alone (a catch would start polling them).
  for (const promise of promises) if (!isRestatePromiseLike(promise)) promise.catch(() => undefined)
  const values: T[] = []
  for (const promise of promises) values.push(await promise)
  return values
}

async function settleInOrder<T>(promises: readonly Promise<T>[]): Promise<PromiseSettledResult<T>[]> {
  const settled: PromiseSettledResult<T>[] = []
  for (const promise of promises) {
    try {
      settled.push({ status: 'fulfilled', value: await promise })
    } catch (reason) {
      settled.push({ status: 'rejected', reason })
    }
  }
  return settled
}

function observe<R>(runtime: DurableRuntime, promise: Promise<R>): Promise<R> {
  return promise.then(undefined, (error: unknown) => {
    notifyRuntimeCancelled(runtime, error)
    throw error
  })
}

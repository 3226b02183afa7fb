import type { StepKey } from '../durable/runtime'
import { attemptStopped, effectIssued, intentRecorded, stoppedBeforeEffect } from './intent-hints'
import { journalStep } from './step-scope'
import type { StepObserver } from './runtime'
import type { RestateContextLike } from './types'
import { DEFAULT_RUN_OPTIONS, isRestatePromiseLike } from './types'

/** The name of the intent entry journaled before at-most-once step `stepName`. Durable: never renamed. */
export function intentStepName(stepName: string): string {
  return `intent:${stepName}`
}

/** Issues an at-most-once step's effect; its closure reads `resumed()` (which may wait, see `createIntentGate`). */
export type IssueEffect<T> = (resumed: () => Promise<boolean>) => Promise<T>

/**
 * An at-most-once step: its journaled intent, and its effect, issued once the intent is journaled. Awaited alone it
 * waits for the intent, then issues the effect and waits for it; `runtime.all` instead waits for the intents of every
 * such step it joins at once, then issues their effects in order (see {@link issueEffects}). Either way one Restate
 * promise is awaited at a time, as the SDK requires.
 */
export class AtMostOnceStep<T> implements Promise<T> {
  readonly [Symbol.toStringTag] = 'AtMostOnceStep'
  private readonly outcome = settlable<T>()
  private effect: Promise<T> | undefined
  private claimed = false

  constructor(readonly intent: Promise<unknown>, private readonly issueEffect: () => Promise<T>, private readonly onSettled: () => void) {
    // Settled for whoever awaits the step itself; a join reads the effect instead.
    this.outcome.promise.catch(() => undefined)
  }

  /** Takes the step for one driver (a join, or its own `then`); false when another already has it. */
  claim(): boolean {
    if (this.claimed) return false
    this.claimed = true
    return true
  }

  /** Issues the effect, once, after the intent is journaled; the promise to join (a Restate one when the effect's is). */
  issue(): Promise<T> {
    this.effect ??= settleWith(this.issueEffect(), this.outcome, this.onSettled)
    return this.effect
  }

  then<R1 = T, R2 = never>(onFulfilled?: ((value: T) => R1 | PromiseLike<R1>) | null, onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null): Promise<R1 | R2> {
    if (this.claim()) void this.driveAlone()
    return this.outcome.promise.then(onFulfilled, onRejected)
  }

  catch<R = never>(onRejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<T | R> {
    return this.then(undefined, onRejected)
  }

  finally(onFinally?: (() => void) | null): Promise<T> {
    return this.then().finally(onFinally)
  }

  private async driveAlone(): Promise<void> {
    try {
      await this.intent
      await this.issue()
    } catch (error) {
      this.outcome.reject(error)
    }
  }
}

interface Settlable<T> { promise: Promise<T>; resolve(value: T): void; reject(reason: unknown): void }

function settlable<T>(): Settlable<T> {
  const settlers: Pick<Settlable<T>, 'resolve' | 'reject'> = { resolve: () => undefined, reject: () => undefined }
  const promise = new Promise<T>((resolve, reject) => Object.assign(settlers, { resolve, reject }))
  return { promise, ...settlers }
}

/** Mirrors `effect` into `outcome`, through `map` for a Restate promise (a `then` would start polling it). */
function settleWith<T>(effect: Promise<T>, outcome: Settlable<T>, onSettled: () => void): Promise<T> {
  if (isRestatePromiseLike(effect)) {
    return effect.map((value, failure) => {
      onSettled()
      if (failure !== undefined) {
        outcome.reject(failure)
        throw failure
      }
      outcome.resolve(value as T)
      return value as T
    })
  }
  return effect.then(value => {
    onSettled()
    outcome.resolve(value)
    return value
  }, (error: unknown) => {
    onSettled()
    outcome.reject(error)
    throw error
  })
}

/**
 * For a join: waits, in one await (`joinIntents`), for the intents of the at-most-once steps among `promises` that
 * nothing drives yet, issues their effects in the order of `promises`, and returns `promises` with each step it claimed
 * replaced by its effect. The journal's order of commands is then decided by the code, not by when acknowledgements
 * arrive.
 */
export async function issueEffects(promises: readonly Promise<unknown>[], joinIntents: (intents: Promise<unknown>[]) => Promise<unknown>): Promise<Promise<unknown>[]> {
  const claimed = new Set<AtMostOnceStep<unknown>>()
  for (const promise of promises) if (promise instanceof AtMostOnceStep && promise.claim()) claimed.add(promise)
  if (claimed.size > 0) await joinIntents([...claimed].map(step => step.intent))
  // A step another driver already has (its own `then`) issues its effect after its own intent: the join awaits it as is.
  return promises.map(promise => (promise instanceof AtMostOnceStep && claimed.has(promise) ? promise.issue() : promise))
}

/** Turns an at-most-once step into an {@link AtMostOnceStep}. */
export type IntentGate = <T>(key: StepKey, issueEffect: IssueEffect<T>) => AtMostOnceStep<T>

/**
 * The intents of one attempt. Before an at-most-once step's effect, its intent is journaled as a `ctx.run` of its own
 * (`intent:<step name>`) and awaited: the SDK resolves a run only with the completion Restate sends back once it has
 * journaled it, so the effect never starts before its intent is in the journal. The effect's closure reads
 * `resumed: false` when this attempt recorded the intent, and `resumed: true` when the intent came from the journal: an
 * earlier attempt recorded it and may have started the effect, whose result the journal does not hold. The one
 * exception: when that earlier attempt ran in this process and was seen to stop before it issued the effect (a
 * suspension while it waited for the intent's acknowledgement), the effect never started, and it runs as new (see
 * `intent-hints.ts`). A step `observer` (a crash test's) is told of each recorded intent until its effect settles, so a
 * planned kill never lands between the two.
 */
export function createIntentGate(ctx: RestateContextLike, observer: StepObserver | undefined): IntentGate {
  const attempt = {}
  const request = ctx.request?.()
  const waiting = new Set<string>()
  const tokens = new Set<() => void>()
  let ended = request?.attemptCompletedSignal?.aborted === true
  request?.attemptCompletedSignal?.addEventListener('abort', () => {
    ended = true
    for (const key of waiting) attemptStopped(key, attempt)
    for (const release of tokens) release()
  }, { once: true })
  return <T>(key: StepKey, issueEffect: IssueEffect<T>): AtMostOnceStep<T> => {
    const hintKey = request === undefined ? undefined : `${request.id}\0${key.name}`
    let recordedHere = false
    let release: (() => void) | undefined
    const intent = journalStep(ctx, intentStepName(key.name), () => {
      recordedHere = true
      if (hintKey !== undefined && !ended) {
        intentRecorded(hintKey, attempt)
        waiting.add(hintKey)
      }
      if (observer) tokens.add(release = observer.intentRecorded(key.name))
      return true
    }, DEFAULT_RUN_OPTIONS)
    const resumed = async (): Promise<boolean> => !recordedHere && !(hintKey !== undefined && await stoppedBeforeEffect(hintKey))
    const issue = (): Promise<T> => {
      // An attempt that has ended issues nothing: a later attempt may already rely on its stop.
      if (ended) return new Promise<T>(() => undefined)
      if (hintKey !== undefined) {
        waiting.delete(hintKey)
        effectIssued(hintKey, attempt)
      }
      return issueEffect(resumed)
    }
    return new AtMostOnceStep(intent, issue, () => {
      release?.()
      if (release) tokens.delete(release)
    })
  }
}

import type { StepKey } from '../durable/runtime'
import type { StepObserver } from './runtime'
import type { RestateContextLike } from './types'

/**
 * Anchors of at-most-once steps (`StepOptions.after`). An at-most-once step issued right after the steps that decided
 * it needs no intent of its own: their journaled results stand for it. When its own run command is missing from the
 * journal, it never started if one of its anchors ran in this attempt (the journal ended before them), and it may have
 * started if all of them came from the journal (an earlier attempt got past them and may have issued it).
 *
 * The one relaxation, as for intents (`intent-hints.ts`): an attempt of this process seen to stop after an anchor ran
 * and before it issued the steps anchored on it (a suspension while it waited for the anchor's acknowledgement, as in
 * Restate's always-replay mode) issued nothing, so the next attempt runs those steps as new. Only a hint: a retry on
 * another replica, or after this process died, gets the journal's answer.
 */
export interface StepAnchors {
  /** The closure of step `name` runs in this attempt: its result is this attempt's own. */
  ran(name: string): void
  /** The closure of step `name` returned `value` in this attempt (kept while it may be an anchor). */
  produced(name: string, value: unknown): void
  /** Whether the journaled value of step `name` is wanted (a stop mark of an earlier attempt names it). */
  watches(name: string): boolean
  /** Step `name` settled with `value` from the journal, as the earlier attempt that left a mark on it may have produced. */
  replayed(name: string, value: unknown): void
  /** This attempt has ended: it issues nothing more. */
  readonly ended: boolean
  /**
   * A step is issued now. With `after` (anchored on those steps) its effect may start from here on; without, the steps
   * this attempt ran before are no longer anchors. Returns what the step calls once it settled.
   */
  issuing(after: readonly StepKey[] | undefined): () => void
  /**
   * Whether an at-most-once step anchored on `after`, whose run command is not in the journal, may have started: at
   * once when one of them ran in this attempt (the usual case), else once the process's marks told.
   */
  mayHaveStarted(after: readonly StepKey[]): boolean | Promise<boolean>
}

const releaseNothing = (): void => undefined

/** How long a later attempt waits for a still-running earlier attempt of this process to stop or issue. */
const STOP_WAIT_MS = 5_000
/** Marks of attempts whose next attempt ran elsewhere (or never came) are dropped after this long. */
const MARK_TTL_MS = 60_000
/** Steps of one attempt that may still be anchors, at most (a group of calls is at most this wide in practice). */
const MAX_CANDIDATES = 64

interface AnchorMark {
  readonly attempt: object
  readonly expiresAt: number
  stopped: boolean
  /** Digest of the result the stopped attempt produced: a mark holds only for a journal that kept that result. */
  digest?: string | undefined
  /** Attempts waiting for this mark to stop or go (made only when one waits: most marks never have any). */
  waiters?: Array<() => void> | undefined
}

function settle(mark: AnchorMark): void {
  if (!mark.waiters) return
  for (const wake of mark.waiters) wake()
  mark.waiters = undefined
}

/**
 * What this process saw of the attempts that ran anchors: `<invocation id>\0<step name>` → mark. Insertion order is
 * expiry order (one TTL for all), so expired marks are dropped from the front.
 */
export class AnchorMarks {
  private readonly marks = new Map<string, AnchorMark>()

  /**
   * `attempt` ran the anchor `key`; nothing anchored on it is issued yet. No sweep here (every attempt sweeps once as it
   * starts): an attempt's own marks go as it issues on them, only ended attempts leave marks behind.
   */
  ran(key: string, attempt: object): void {
    const previous = this.marks.get(key)
    if (previous) {
      this.marks.delete(key)
      settle(previous)
    }
    this.marks.set(key, { attempt, expiresAt: performance.now() + MARK_TTL_MS, stopped: false })
  }

  /** `attempt` issued a step anchored on `key`: the mark is gone (that step may have started). */
  issued(key: string, attempt: object): void {
    const mark = this.marks.get(key)
    if (mark?.attempt !== attempt) return
    this.marks.delete(key)
    settle(mark)
  }

  /** `attempt` ended without issuing anything anchored on `key`; `digest` is that of the result it produced. */
  stopped(key: string, attempt: object, digest: string | undefined): void {
    const mark = this.marks.get(key)
    if (mark?.attempt !== attempt) return
    mark.stopped = true
    mark.digest = digest
    settle(mark)
  }

  /** Whether a mark names `key`. */
  has(key: string): boolean {
    return this.marks.has(key)
  }

  /**
   * True when an attempt of this process ran anchor `key`, produced the result whose digest is `digest` (the one the
   * journal holds now), and stopped before issuing on it; waits for one still running. A journal holding another
   * attempt's result (one that may have gone on elsewhere) makes the mark worthless.
   */
  async stoppedAfter(key: string, digest: string | undefined): Promise<boolean> {
    const mark = this.marks.get(key)
    if (!mark) return false
    if (!mark.stopped) await waitAtMost(new Promise<void>(resolve => { (mark.waiters ??= []).push(resolve) }), STOP_WAIT_MS)
    return this.marks.get(key) === mark && mark.stopped && mark.digest !== undefined && mark.digest === digest
  }

  /** Takes the mark of `key`: the caller issues on it, so no later attempt may rely on it. */
  take(key: string): void {
    const mark = this.marks.get(key)
    if (!mark) return
    this.marks.delete(key)
    settle(mark)
  }

  /** Drops the marks past their time. */
  sweep(): void {
    const now = performance.now()
    for (const [key, mark] of this.marks) {
      if (mark.expiresAt > now) break
      this.marks.delete(key)
      settle(mark)
    }
  }
}

/** The marks of this process: every runtime of every invocation it serves shares them (a hint, never the answer). */
const processMarks = new AnchorMarks()

/**
 * The anchors of one attempt of `ctx`'s invocation. `marks` defaults to the process's. A step `observer` (a crash
 * test's) is told of each step that may be an anchor until the steps anchored on it settle, or another step is issued
 * without anchors, so a planned kill never lands between an anchor and its dependents.
 */
export function createStepAnchors(ctx: RestateContextLike, observer?: StepObserver, marks: AnchorMarks = processMarks): StepAnchors {
  marks.sweep()
  const attempt = {}
  const request = ctx.request?.()
  const live = new Set<string>()
  // Steps this attempt ran since it last issued an anchored step: the ones a stop leaves without their dependents.
  const candidates = new Set<string>()
  // One answer per anchor set and attempt: every step of a group anchored on it gets the same.
  const answers = new Map<string, Promise<boolean>>()
  // Observer tokens of the candidates: released once what is anchored on them settled.
  let tokens: Array<() => void> = []
  const takeTokens = (): (() => void) => {
    if (tokens.length === 0) return releaseNothing
    const taken = tokens
    tokens = []
    return () => { for (const release of taken) release() }
  }
  // What the candidates' closures returned, and what the journal gave for steps an earlier attempt's mark names.
  const produced = new Map<string, unknown>()
  const journaled = new Map<string, unknown>()
  const markKey = (name: string): string | undefined => (request === undefined ? undefined : `${request.id}\0${name}`)
  let ended = request?.attemptCompletedSignal?.aborted === true
  request?.attemptCompletedSignal?.addEventListener('abort', () => {
    ended = true
    for (const name of candidates) {
      const key = markKey(name)
      if (key !== undefined) marks.stopped(key, attempt, produced.has(name) ? digestOf(produced.get(name)) : undefined)
    }
    produced.clear()
    takeTokens()()
  }, { once: true })
  return {
    get ended() { return ended },
    produced(name, value) {
      if (candidates.has(name)) produced.set(name, value)
    },
    watches(name) {
      const key = markKey(name)
      return key !== undefined && marks.has(key)
    },
    replayed(name, value) {
      journaled.set(name, value)
    },
    ran(name) {
      live.add(name)
      if (observer && !ended) tokens.push(observer.intentRecorded(name))
      const key = markKey(name)
      if (key === undefined || ended) return
      if (candidates.size >= MAX_CANDIDATES) forgetOldest(candidates, marks, markKey, attempt)
      candidates.add(name)
      marks.ran(key, attempt)
    },
    issuing(after) {
      for (const name of candidates) {
        const key = markKey(name)
        if (key !== undefined) marks.issued(key, attempt)
      }
      candidates.clear()
      produced.clear()
      const release = takeTokens()
      if (after === undefined || after.length === 0) {
        release()
        return releaseNothing
      }
      return release
    },
    mayHaveStarted(after) {
      for (const anchor of after) if (live.has(anchor.name)) return false
      const id = after.map(anchor => anchor.name).join('\0')
      let answer = answers.get(id)
      if (!answer) {
        answer = stoppedAfterAny(marks, after.map(anchor => ({ key: markKey(anchor.name), digest: journaled.has(anchor.name) ? digestOf(journaled.get(anchor.name)) : undefined }))).then(stopped => !stopped)
        answers.set(id, answer)
      }
      return answer
    },
  }
}

async function stoppedAfterAny(marks: AnchorMarks, anchors: ReadonlyArray<{ key: string | undefined; digest: string | undefined }>): Promise<boolean> {
  for (const { key, digest } of anchors) {
    if (key === undefined || !(await marks.stoppedAfter(key, digest))) continue
    for (const other of anchors) if (other.key !== undefined) marks.take(other.key)
    return true
  }
  return false
}

/**
 * A digest of a step result, to tell the result an attempt produced from another attempt's. Every result an anchor can
 * have carries a wall-clock stamp taken in its closure (a model step's `endedAt`, a tool call's, a decision's `at`), so
 * two attempts' results differ in practice even when their content does not.
 */
export function digestOf(value: unknown): string | undefined {
  if (value === undefined) return undefined
  const text = JSON.stringify(value)
  let hash = 2166136261
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index)
    hash = Math.imul(hash, 16777619) >>> 0
  }
  return `${text.length}:${hash.toString(16)}`
}

function forgetOldest(candidates: Set<string>, marks: AnchorMarks, markKey: (name: string) => string | undefined, attempt: object): void {
  const oldest = candidates.values().next().value
  if (oldest === undefined) return
  candidates.delete(oldest)
  const key = markKey(oldest)
  if (key !== undefined) marks.issued(key, attempt)
}

async function waitAtMost(promise: Promise<void>, waitMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([promise, new Promise<void>(resolve => { timer = setTimeout(resolve, waitMs) })])
  clearTimeout(timer)
}

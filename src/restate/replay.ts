/** Minimal structural slice of the agent's Hookable for `replay:done`. */
export interface ReplayDoneHooks {
  /** Fires the `replay:done` hook. */
  callHook: (name: 'replay:done', ctx: Record<string, never>) => unknown
}

/** Options for `createReplayTracker`. */
export interface ReplayTrackerOptions {
  /** Agent hooks to notify at the replay→live transition (`replay:done`, once, after the `onLive` callbacks). */
  hooks?: ReplayDoneHooks
  /**
   * Whether THIS invocation resumes a prior journal rather than running fresh. The host supplies it (e.g. the object
   * already has persisted turns, or the SDK reports a non-first attempt). Powers `isResuming()`.
   */
  resuming?: boolean
}

/** Tells whether an invocation is still replaying its journal and notifies when it goes live. */
export interface ReplayTracker {
  /** `true` until the first live (non-journaled) execution of a step; conservatively true at a fresh start too. */
  isReplaying: () => boolean
  /** `true` only while actively replaying a resumed journal (`resuming: true` and not live yet). */
  isResuming: () => boolean
  /** Marks the invocation live. Called from inside journaled closures; idempotent. */
  markLive: () => void
  /** Registers a callback for the replay→live transition; runs at once when already live. Returns an unregister function. */
  onLive: (cb: () => void) => () => void
}

/** Logs a swallowed failure of an adapter callback when `ZIDANE_DEBUG` is set. */
export function debug(message: string, error: unknown): void {
  if (process.env.ZIDANE_DEBUG) console.error(`[zidane/restate] ${message}`, error)
}

/**
 * Create a per-invocation replay tracker. Pass it to `restateRuntime` (and `restateTool` / `restateWaitBackground`)
 * through their `replayTracker` option; consume it with `isReplaying()` / `onLive()` / `replayAwareAbort`.
 */
export function createReplayTracker(options: ReplayTrackerOptions = {}): ReplayTracker {
  let live = false
  const callbacks = new Set<() => void>()
  return {
    isReplaying: () => !live,
    isResuming: () => options.resuming === true && !live,
    markLive() {
      if (live) return
      live = true
      for (const callback of [...callbacks]) {
        try { callback() } catch (error) { debug('onLive callback failed', error) }
      }
      callbacks.clear()
      if (!options.hooks) return
      try {
        void Promise.resolve(options.hooks.callHook('replay:done', {})).catch(error => debug('replay:done hook failed', error))
      } catch (error) {
        debug('replay:done hook failed', error)
      }
    },
    onLive(callback) {
      if (live) {
        callback()
        return () => {}
      }
      callbacks.add(callback)
      return () => { callbacks.delete(callback) }
    },
  }
}

/**
 * Wrap an abort function so it defers during journal replay: live → runs at once; replaying → queued and applied
 * at the first live boundary. Several calls during replay collapse into one.
 */
export function replayAwareAbort(tracker: ReplayTracker, abort: () => void): () => void {
  let queued = false
  return () => {
    if (!tracker.isReplaying()) {
      abort()
      return
    }
    if (queued) return
    queued = true
    tracker.onLive(() => {
      queued = false
      abort()
    })
  }
}

import type * as restate from '@restatedev/restate-sdk'

/**
 * The retry policy of the handlers that run agents (a session's `run` and `deliver`, the child runner's `run`):
 * Restate's own, bounded to `maxAttempts` (`ZIDANE_MAX_ATTEMPTS`), after which Restate kills the invocation. Its
 * spacing stays the server's (`restate.toml`'s default policy). Without a bound (`undefined`) the handlers keep the
 * server's policy whole, unlimited attempts included. It is the backstop: a step that crashes the process is ended
 * sooner, and alone, by the crash guard (`stepCrashGuard`); this bound ends what the guard cannot see (a crash outside
 * any step, a run failing the same way forever), and the attempts of every run the crashes cut count towards it.
 *
 * Kill, not pause: a step that crashes the process on every attempt crashes it again when resumed, and a paused
 * invocation keeps its session's lock, so every later prompt of that session would queue behind it until an operator
 * acts. Killed, it frees the session; the session's next run records the killed run `failed`, naming the step it was
 * in (`endKilledRuns`). The other services' handlers (inbox, resumer, event log) keep unlimited attempts: they run no
 * tenant's work, and killing them would lose a message, an answer or an event.
 */
export function agentRetryPolicy(maxAttempts: number | undefined): { retryPolicy?: restate.RetryPolicy } {
  return maxAttempts === undefined ? {} : { retryPolicy: { maxAttempts, onMaxAttempts: 'kill' } }
}

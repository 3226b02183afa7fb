import * as restate from '@restatedev/restate-sdk'
import type { RequestInteraction, ToolDef } from 'zidane'
import type { SteeringInbox } from 'zidane/durable'
import type { StepWatcher } from 'zidane/restate'
import { INBOX_SERVICE } from '../../contract/session'
import type { InboxObject } from '../inbox/inbox-object'

const Inbox: InboxObject = { name: INBOX_SERVICE }

/** The run's steering inbox, and the watcher its runtime hands every step to (`watchSteps`). */
export interface RunSteering extends SteeringInbox {
  /** Joins a step with the armed signal: register it with `watchSteps` on the run's runtime. */
  readonly watchStep: StepWatcher
  /** The run's tools, those that journal themselves (and wait outside any step) told apart for the check. */
  watchTools(tools: readonly ToolDef[]): ToolDef[]
  /** The run's approval requests, told apart for the check as the self-journaling tools are. */
  watchInteraction(request: RequestInteraction): RequestInteraction
}

/** Options of {@link inboxSteering}. */
export interface InboxSteeringOptions {
  /** Called right before each wait outside any step (a self-journaling call, an approval), on every replay alike. */
  beforeWaitOutsideSteps?: () => void
}

/**
 * The run's steering inbox on Restate. A call to the inbox object at every turn boundary would cost a whole
 * invocation per turn, so the run arms a signal instead: an awakeable it hands to `inbox/<key>/watch` (one-way), which
 * the inbox resolves when a message is waiting or arrives. While the signal is armed, each step the run awaits is
 * awaited together with it, in one combinator (`watchStep`): a race of the signal against the step, joined with the
 * step. The shared core takes notifications in journal order and only as far as an await needs, so the signal wins
 * exactly when its completion is journaled before the step's (or was already taken up by an earlier await): the
 * journal decides, on every replay alike, and the check journals nothing. At the next boundary, `take` calls
 * `inbox/<key>/take` only when the signal fired, then arms a new one at the boundary after.
 *
 * A turn that waited outside any step (a question, an approval, a sub-agent: `journal: 'self'`) may end with no step
 * after the wait, so a message that arrived during it would be seen a turn late: after such a turn the boundary still
 * races the signal against a zero sleep (two entries). Racing it against a step that already completed instead does
 * not work: the SDK's combinator settles with the completed step before it has looked at the signal
 * (`docs/design/steering-inbox.md`).
 */
export function inboxSteering(ctx: restate.ObjectContext, options: InboxSteeringOptions = {}): RunSteering {
  let signal: restate.RestatePromise<null> | undefined
  let fired = false
  // Set by a wait outside any step since the last boundary: the code path sets it, the same on every replay.
  let waitedOutsideSteps = false
  const marked = <A extends unknown[], R>(call: (...args: A) => R) => (...args: A): R => {
    waitedOutsideSteps = true
    options.beforeWaitOutsideSteps?.()
    return call(...args)
  }
  const watchStep = <T>(step: Promise<T>): Promise<T> => {
    if (!signal || fired || !restate.isRestatePromise(step)) return step
    return withSignal(signal, step, () => { fired = true })
  }
  return {
    watchStep,
    watchTools: tools => tools.map(tool => (tool.journal === 'self' ? { ...tool, execute: marked(tool.execute.bind(tool)) } : tool)),
    watchInteraction: request => Object.assign(marked(request), request.journal ? { journal: request.journal } : {}),
    take: async () => {
      const waited = waitedOutsideSteps
      waitedOutsideSteps = false
      if (!signal) {
        const awakeable = ctx.awakeable<null>()
        ctx.objectSendClient(Inbox, ctx.key).watch({ awakeableId: awakeable.id })
        signal = awakeable.promise
        return []
      }
      if (!fired && waited) fired = await restate.RestatePromise.race([signal.map(() => true), ctx.sleep(0).map(() => false)])
      if (!fired) return []
      signal = undefined
      fired = false
      return (await ctx.objectClient(Inbox, ctx.key).take({})).map(message => ({ id: message.id, text: message.text }))
    },
  }
}

/**
 * `step`, awaited in one combinator with `signal`: a race of the two joined with the step. Settles as the step does;
 * calls `onFired` first when the signal won the race, which the journal's order decides.
 */
function withSignal<T>(signal: restate.RestatePromise<null>, step: restate.RestatePromise<T>, onFired: () => void): restate.RestatePromise<T> {
  const first = restate.RestatePromise.race([signal.map(() => true), step.map(() => false)])
  return restate.RestatePromise.all([first, step]).map((values, failure) => {
    if (failure !== undefined || values === undefined) throw failure ?? new restate.TerminalError('steering: a watched step settled without a value')
    if (values[0]) onFired()
    return values[1]
  })
}

/** Takes every waiting message for the session's `deliver` handler (which runs them as one prompt). */
export async function takeForDelivery(ctx: restate.ObjectContext): Promise<string[]> {
  return (await ctx.objectClient(Inbox, ctx.key).take({ forDelivery: true })).map(message => message.text)
}

import * as restate from '@restatedev/restate-sdk'
import type { SteeringInbox } from 'zidane/durable'
import { INBOX_SERVICE } from '../../contract/session'
import type { InboxObject } from '../inbox/inbox-object'

const Inbox: InboxObject = { name: INBOX_SERVICE }

/**
 * The run's steering inbox on Restate. A call to the inbox object at every turn boundary would cost a whole
 * invocation per turn, so the run arms a signal instead: an awakeable it hands to `inbox/<key>/watch` (one-way), which
 * the inbox resolves when a message is waiting or arrives. At each boundary the run checks the signal without waiting
 * (raced against a zero sleep) and only when it fired calls `inbox/<key>/take`, then arms a new one at the next
 * boundary. Every step of this is a journaled context call made outside any step, so a replay takes the same path.
 * A signal is checked from the boundary after the one that armed it: checked at once, it loses the race to the zero
 * sleep all but always (the inbox's `watch` must run first), so that check would cost a sleep in the journal of every
 * run for nothing; a message it would have caught joins the run at its next boundary, or runs as the next `deliver`.
 */
export function inboxSteering(ctx: restate.ObjectContext): SteeringInbox {
  let signal: restate.RestatePromise<boolean> | undefined
  return {
    take: async () => {
      if (!signal) {
        const awakeable = ctx.awakeable<null>()
        ctx.objectSendClient(Inbox, ctx.key).watch({ awakeableId: awakeable.id })
        signal = awakeable.promise.map(() => true)
        return []
      }
      const fired = await restate.RestatePromise.race([signal, ctx.sleep(0).map(() => false)])
      if (!fired) return []
      signal = undefined
      return (await ctx.objectClient(Inbox, ctx.key).take({})).map(message => ({ id: message.id, text: message.text }))
    },
  }
}

/** Takes every waiting message for the session's `deliver` handler (which runs them as one prompt). */
export async function takeForDelivery(ctx: restate.ObjectContext): Promise<string[]> {
  return (await ctx.objectClient(Inbox, ctx.key).take({ forDelivery: true })).map(message => message.text)
}

import type * as restate from '@restatedev/restate-sdk'
import type { SteeringInbox } from 'zidane/durable'
import { INBOX_SERVICE } from '../contract'
import type { InboxObject } from '../inbox/inbox-object'

const Inbox: InboxObject = { name: INBOX_SERVICE }

/**
 * The run's steering inbox on Restate: at each turn boundary the run calls `inbox/<key>/take`, a journaled call made
 * through the object context outside any step, so a replay gets the very messages the first execution took.
 */
export function inboxSteering(ctx: restate.ObjectContext): SteeringInbox {
  return {
    take: async () => (await ctx.objectClient(Inbox, ctx.key).take({})).map(message => ({ id: message.id, text: message.text })),
  }
}

/** Takes every waiting message for the session's `deliver` handler (which runs them as one prompt). */
export async function takeForDelivery(ctx: restate.ObjectContext): Promise<string[]> {
  return (await ctx.objectClient(Inbox, ctx.key).take({ forDelivery: true })).map(message => message.text)
}

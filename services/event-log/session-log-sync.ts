import type * as restate from '@restatedev/restate-sdk'
import { EVENTS_SERVICE } from '../../contract/event-log'
import type { EventDoorbell } from './event-doorbell'
import type { EventLogObject } from './event-log-object'
import { isInTurnEvent } from './session-events'
import type { EventSink, StoredCounts } from './session-events'

const EventLog: EventLogObject = { name: EVENTS_SERVICE }

/**
 * How long the doorbell may hold a write whose events are only the tool calls of a turn in progress: the turn's next
 * write (its results) usually rings it sooner, and both share one sync; a long call's start still shows within it.
 */
export const IN_TURN_RING_DELAY_MS = 200

/**
 * The event sink of a session's run. The log derives the events from the session's own state, so nothing of them is
 * sent: each write that has events rings the `doorbell` (outside the journal: the log syncs within the doorbell's
 * window; a write in the middle of a turn may wait for the turn's next one), and the run journals a one-way
 * `events/<key>/sync` where the log must have caught up for certain: with a question (a person must see it), at each
 * `flush()` (before the run waits on a person or its sub-agents, at its end). A journaled one-way call is processed
 * after the state writes journaled before it, so that sync reads them: it carries what the session then held, and the
 * doorbell drops a ring it covers.
 */
export function createSessionLogSync(ctx: restate.ObjectContext, doorbell: EventDoorbell | undefined): EventSink {
  let unsynced: StoredCounts | undefined
  const flush = (): void => {
    if (!unsynced) return
    // The counts let the log read every new turn in one call; the doorbell's ring for these writes is now redundant.
    ctx.objectSendClient(EventLog, ctx.key).sync({ ...unsynced, journaled: true })
    doorbell?.covered(ctx.key, unsynced)
    unsynced = undefined
  }
  return {
    publish(events, counts) {
      if (events.length === 0) return
      unsynced = counts
      doorbell?.ring(ctx.key, counts, events.every(isInTurnEvent) ? IN_TURN_RING_DELAY_MS : 0)
      if (events.some(event => event.type === 'question')) flush()
    },
    flush,
  }
}

import type * as restate from '@restatedev/restate-sdk'
import type { NewSessionEvent } from '../../contract/event-log'
import { EVENTS_SERVICE } from '../../contract/event-log'
import type { EventLogObject } from './event-log-object'
import { isInTurnEvent } from './session-events'
import type { EventSink } from './session-events'

const EventLog: EventLogObject = { name: EVENTS_SERVICE }

/**
 * The event sink of a sub-agent, which has no state of its own for the log to read: its events are buffered and
 * journaled as one one-way `events/<key>/append` per turn boundary (a write that completes a turn, starts or ends its
 * run: any event but a `tool:start` or `tool:end` of a turn in progress) and at each `flush()`. Journaled one-way
 * calls of one invocation to one object key arrive exactly once and in order: the log appends what it receives.
 */
export function createEventOutbox(ctx: restate.Context, logKey: string): EventSink & { settle(): Promise<void> } {
  let buffered: NewSessionEvent[] = []
  let sent = false
  const flush = (): void => {
    if (buffered.length === 0) return
    ctx.objectSendClient(EventLog, logKey).append({ events: buffered })
    buffered = []
    sent = true
  }
  return {
    publish(events) {
      buffered.push(...events)
      if (!events.every(isInTurnEvent)) flush()
    },
    flush,
    /**
     * The last flush of a sub-agent, awaited: a call (ordered after the one-way sends before it) that returns once the
     * log holds every event, so the sub-agent's events precede whatever its parent writes after it ends.
     */
    async settle() {
      if (buffered.length === 0 && !sent) return
      const events = buffered
      buffered = []
      await ctx.objectClient(EventLog, logKey).append({ events })
    },
  }
}

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
export function createEventOutbox(ctx: restate.Context, logKey: string): EventSink {
  let buffered: NewSessionEvent[] = []
  const flush = (): void => {
    if (buffered.length === 0) return
    ctx.objectSendClient(EventLog, logKey).append({ events: buffered })
    buffered = []
  }
  return {
    publish(events) {
      buffered.push(...events)
      if (!events.every(isInTurnEvent)) flush()
    },
    flush,
  }
}

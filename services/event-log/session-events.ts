import type * as restate from '@restatedev/restate-sdk'
import { restateSessionStore } from 'zidane/restate'
import type { RestateSessionStoreOptions } from 'zidane/restate'
import { createMemorySessionStore, EventRecorder, recordingSessionStore } from 'zidane/session'
import type { SessionStore } from 'zidane/session'
import type { NewSessionEvent } from './event-log-contract'
import { EVENTS_SERVICE } from './event-log-contract'
import type { EventLogObject } from './event-log-object'

const EventLog: EventLogObject = { name: EVENTS_SERVICE }

/** Appends events to the log of session `key` with a one-way call: journaled, so sent once whatever the replays. */
export function eventLogPublisher(ctx: restate.Context, key: string): (events: NewSessionEvent[]) => void {
  return events => ctx.objectSendClient(EventLog, key).append({ events })
}

/** The session object's store: its paged state, every write recorded in the session's event log. */
export function recordedSessionStore(ctx: restate.ObjectContext, options: RestateSessionStoreOptions = {}): SessionStore {
  return recordingSessionStore(restateSessionStore(ctx, options), new EventRecorder({ depth: 0 }), eventLogPublisher(ctx, ctx.key))
}

/** A sub-agent's store: in memory (the parent merges its turns when it ends), its events live in the root session's log. */
export function recordedChildStore(ctx: restate.Context, rootKey: string, identity: { depth: number; label: string }): SessionStore {
  return recordingSessionStore(createMemorySessionStore(), new EventRecorder(identity), eventLogPublisher(ctx, rootKey))
}

import type * as restate from '@restatedev/restate-sdk'
import { restateSessionStore } from 'zidane/restate'
import type { RestateSessionStoreOptions } from 'zidane/restate'
import { createMemorySessionStore, EventRecorder, recordingSessionStore } from 'zidane/session'
import type { SessionStore } from 'zidane/session'
import type { SessionEventOutbox } from './event-outbox'

/** The session object's store: its paged state, every write's events handed to the invocation's `outbox`. */
export function recordedSessionStore(ctx: restate.ObjectContext, outbox: SessionEventOutbox, options: RestateSessionStoreOptions = {}): SessionStore {
  return recordingSessionStore(restateSessionStore(ctx, options), new EventRecorder({ depth: 0 }), events => outbox.publish(events))
}

/** A sub-agent's store: in memory (the parent merges its turns when it ends), its events in the root session's log. */
export function recordedChildStore(outbox: SessionEventOutbox, identity: { depth: number; label: string }): SessionStore {
  return recordingSessionStore(createMemorySessionStore(), new EventRecorder(identity), events => outbox.publish(events))
}

import type * as restate from '@restatedev/restate-sdk'
import type { EventCourier } from './event-courier'
import type { NewSessionEvent } from './event-log-contract'
import { EVENTS_SERVICE } from './event-log-contract'
import type { EventLogObject } from './event-log-object'

const EventLog: EventLogObject = { name: EVENTS_SERVICE }

/**
 * The journaled send leaves once this many events are unsynced: at most this many events of a running invocation
 * (plus those of the write that passed it) depend on the courier alone, and the journal pays one one-way call per
 * this many events. Durable: it decides where the sends stand in the journal, so runs in flight replay only with it
 * unchanged (a new value needs a new `eventRecording`).
 */
export const OUTBOX_SYNC_EVERY = 64

/**
 * Where one invocation's recorded events go. Each event gets its index within the invocation (replay-stable: the
 * recorder derives the same events in the same order on every attempt), and the log appends each index once.
 */
export interface SessionEventOutbox {
  /** Hands over the events of one session write, in order. */
  publish(events: readonly NewSessionEvent[]): void
  /**
   * Journals a one-way `deliver` of the events published since the last sync (nothing when there are none). Call it
   * after the invocation's last write, on success and failure alike, and before the run waits on another invocation
   * or a person: from then on the log gets them even if no courier batch ever arrives.
   */
  sync(): void
}

/**
 * How an invocation records its events. `'outbox'`: through {@link createEventOutbox}'s numbered batches.
 * `'per-write'`: one journaled one-way `append` per session write, the journal shape of invocations created before
 * the outbox existed (they must replay on this code unchanged, so the invocation's input says which it is).
 */
export type EventRecording = 'outbox' | 'per-write'

/**
 * The outbox of the invocation running in `ctx`, towards the log of `logKey`.
 *
 * The courier (when the process has one) brings the events to the log within its window, outside the journal; the
 * journal carries them in batches of {@link OUTBOX_SYNC_EVERY}, with each question, and at each `sync()`: no journal
 * entry per write, and still every event exactly once (the log keeps a cursor per invocation). What is journaled
 * depends only on the events, never on the courier: an attempt in a process without one replays the same journal
 * (its events only arrive later). With `recording: 'per-write'` every publish is a journaled `append`, as before the
 * outbox.
 */
export function createEventOutbox(ctx: restate.Context, logKey: string, courier: EventCourier | undefined, recording: EventRecording = 'outbox'): SessionEventOutbox {
  if (recording === 'per-write') return perWriteOutbox(ctx, logKey)
  const source = ctx.request().id
  let published = 0
  let synced = 0
  let unsynced: NewSessionEvent[] = []
  const sync = (): void => {
    if (unsynced.length === 0) return
    ctx.objectSendClient(EventLog, logKey).deliver({ source, from: synced, events: unsynced, journaled: true })
    synced = published
    unsynced = []
    courier?.journaled(logKey, source, synced)
  }
  return {
    publish(events) {
      if (events.length === 0) return
      courier?.carry(logKey, source, published, events)
      published += events.length
      unsynced.push(...events)
      // A question parks the run until a person answers: its events must reach the log even if the courier fails.
      if (unsynced.length >= OUTBOX_SYNC_EVERY || events.some(event => event.type === 'question')) sync()
    },
    sync,
  }
}

/** One journaled `append` per write: the recording of invocations created before the outbox. */
function perWriteOutbox(ctx: restate.Context, logKey: string): SessionEventOutbox {
  return {
    publish(events) {
      if (events.length > 0) ctx.objectSendClient(EventLog, logKey).append({ events: [...events] })
    },
    sync: () => undefined,
  }
}

import type { ModelDeltaEventData } from 'zidane'

/**
 * The wire shapes of the live stream between the services (the live hub) and the gateway. Deltas are not durable:
 * they are never journaled, carry no `seq`, and the journaled `turn:end` of their turn is authoritative.
 */

/** `model:delta`'s data, the library's `ModelDeltaEventData`: a piece of a model step in progress. */
export type ModelDelta = ModelDeltaEventData

/** A streamed piece of a model response, as the services publish it: the `model:delta` event's data and its root session. */
export interface LiveDelta extends ModelDeltaEventData {
  /** The root session's Restate key (`<tenant>~<sessionId>`); children publish under their root session's key. */
  sessionKey: string
}

/** One line of the hub's NDJSON stream. */
export type LiveMessage = { type: 'delta'; delta: LiveDelta }

/** Path of a session's live stream on the hub: `/v1/live/<url-encoded session key>`. */
export function liveStreamPath(sessionKey: string): string {
  return `/v1/live/${encodeURIComponent(sessionKey)}`
}

import { iface } from '@restatedev/restate-sdk-core'
import type { AddMessageRequest, AnswerResult, OwnedAnswerRequest, SessionInvocation, SessionRunRequest, SessionRunResult, SessionView, SessionViewRequest } from './session'
import type { EraseSessionRequest, EraseSessionResult, SessionIndexExpireRequest, SessionIndexListRequest, SessionIndexPage, SessionIndexRemoveRequest, SessionIndexUpdate } from './session-index'
import { SESSION_INDEX_SERVICE } from './session-index'
import { INBOX_SERVICE, RESUMER_SERVICE, SESSION_SERVICE } from './session'
import type { LatestRunStart, ReadEventsRequest, ReadEventsResult, WatchRequest, WatchResult } from './event-log'
import { EVENT_WATCH_SERVICE, EVENTS_SERVICE } from './event-log'

// The handlers callers outside a service reach (the gateway through the ingress, the admission object through its
// context), declared as Restate service interfaces over the contract's names and shapes: typed clients come from
// these, never from the handlers' modules. `test/services/service-interfaces.test.ts` checks them against the
// implementations (names and shared flags).

/**
 * The session object's handlers others call: `run` a prompt, `deliver` steered messages, read it with `get` and
 * `invocation`, `erase` it (the gateway's delete, the index's retention).
 */
export const sessionInterface = iface.object(SESSION_SERVICE, {
  run: iface.json<SessionRunRequest, SessionRunResult>(),
  deliver: iface.json<void, SessionRunResult | null>(),
  erase: iface.json<EraseSessionRequest, EraseSessionResult>(),
  get: iface.shared.json<SessionViewRequest, SessionView>(),
  invocation: iface.shared.json<void, SessionInvocation>(),
})

/** The steering inbox's `add`: saves a message; its output's `id` is the `add` invocation's id. */
export const inboxInterface = iface.object(INBOX_SERVICE, {
  add: iface.json<AddMessageRequest, { id: string }>(),
})

/** The resumer's `answer`: answers a question, checking its owner when the request names one. */
export const resumerInterface = iface.object(RESUMER_SERVICE, {
  answer: iface.json<OwnedAnswerRequest, AnswerResult>(),
})

/** The event log's shared `read` of a range. */
export const eventLogInterface = iface.object(EVENTS_SERVICE, {
  read: iface.shared.json<ReadEventsRequest, ReadEventsResult>(),
  latestRun: iface.shared.json<void, LatestRunStart | null>(),
})

/** The watch service's `wait`: parks until a session's log grows. */
export const eventWatchInterface = iface.service(EVENT_WATCH_SERVICE, {
  wait: iface.json<WatchRequest, WatchResult>(),
})

/**
 * The tenant's session index (`session_index/<tenant>`): `update` (sent by the session object), `list` (shared, the
 * gateway's `GET /v1/sessions`), `remove` (a session's erase), `expire` (internal: the retention's delayed check).
 */
export const sessionIndexInterface = iface.object(SESSION_INDEX_SERVICE, {
  update: iface.json<SessionIndexUpdate, void>(),
  list: iface.shared.json<SessionIndexListRequest, SessionIndexPage>(),
  remove: iface.json<SessionIndexRemoveRequest, void>(),
  expire: iface.json<SessionIndexExpireRequest, void>(),
})

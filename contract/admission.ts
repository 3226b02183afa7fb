import { iface } from '@restatedev/restate-sdk-core'
import type { SessionRunRequest } from './session'

/**
 * The admission of a tenant's runs: one `admission` virtual object per tenant (key: the tenant id the gateway derives
 * from the API key) holds the tenant's runs in progress and decides, one request at a time, whether a prompt or a
 * steering message may start one. Its name, handler names and state keys are in journals: never rename them.
 */
export const ADMISSION_SERVICE = 'admission'

/** The client's `Idempotency-Key` and the fingerprint of the body it came with (see `bodyFingerprint`). */
export interface ClientIdempotency {
  key: string
  fingerprint: string
}

/** Input of `admission/<tenant>/admit`: a prompt for session `sessionKey`, started when the tenant has fewer than `maxRuns` runs. */
export interface PromptAdmissionRequest {
  sessionKey: string
  run: SessionRunRequest
  /** The gateway's cap (`GATEWAY_MAX_CONCURRENT_RUNS`): a request carries the cap in force where it was made. */
  maxRuns: number
  idempotency?: ClientIdempotency
}

/** Input of `admission/<tenant>/admitMany`: prompts decided in order, as many `admit`s one after another would be. */
export interface PromptAdmissionBatch {
  requests: PromptAdmissionRequest[]
}

/** Input of `admission/<tenant>/steer`: a message for session `sessionKey`; it starts a run only when the session has none. */
export interface SteeringAdmissionRequest {
  sessionKey: string
  text: string
  maxRuns: number
  idempotency?: ClientIdempotency
}

/** Why a request was not admitted: the tenant holds `maxRuns` runs, or its key came before with another body. */
export type AdmissionRefusal = { outcome: 'too_many_runs'; maxRuns: number } | { outcome: 'idempotency_key_reused' }

/**
 * Output of `admit`: the run's invocation id (the first one's, for a repeated key and body), and whether another run
 * of the session is ahead of it (it starts when that one ends).
 */
export type PromptAdmission = { outcome: 'admitted'; invocationId: string; queued: boolean } | AdmissionRefusal

/** Output of `steer`: the message is in the session's inbox; its id is the invocation id of the inbox's `add`. */
export type SteeringAdmission = { outcome: 'saved'; messageId: string } | AdmissionRefusal

/** Input of the internal `watch` (shared): waits for an admitted invocation of the session to end (`watchAll`: for each of a batch). */
export interface WatchedRun {
  sessionKey: string
  invocationId: string
}

/** Input of the internal `ended`: the watched invocation ended; `failed` when it ended with an error (a kill included). */
export interface EndedRun extends WatchedRun {
  failed: boolean
}

/**
 * The admission object's interface, for typed clients (`@restatedev/restate-sdk-clients`, `ctx.objectClient`):
 * - `admit`, `steer` (exclusive): decide and start, as above; `admitMany` (exclusive) admits a batch of prompts in order.
 * - `failedRun` (shared): the invocation id of the session's latest admitted run that ended with an error, or null.
 * - `admittedPrompts` (shared): the invocation ids of the session's prompts admitted and not yet seen end, in order.
 * - `watch`, `watchAll` (shared), `ended`, `forget` (exclusive): internal; the object sends them to itself.
 */
export const admissionInterface = iface.object(ADMISSION_SERVICE, {
  admit: iface.json<PromptAdmissionRequest, PromptAdmission>(),
  admitMany: iface.json<PromptAdmissionBatch, PromptAdmission[]>(),
  steer: iface.json<SteeringAdmissionRequest, SteeringAdmission>(),
  failedRun: iface.shared.json<string, string | null>(),
  admittedPrompts: iface.shared.json<string, string[]>(),
  watch: iface.shared.json<WatchedRun, void>(),
  watchAll: iface.shared.json<WatchedRun[], void>(),
  ended: iface.json<EndedRun, void>(),
  forget: iface.json<string, void>(),
})

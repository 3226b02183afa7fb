import { randomUUID } from 'node:crypto'
import * as clients from '@restatedev/restate-sdk-clients'
import { admissionInterface } from '../contract/admission'
import type { AdmissionRefusal, PromptAdmissionRequest, SteeringAdmissionRequest } from '../contract/admission'
import { GatewayError } from './errors'
import { answeredWithin, heldCall, type RestateIngress } from './restate-ingress'
import { BUSY_RETRY_AFTER_SECONDS } from './tenant-limits'

/**
 * Default wait for the tenant's admission to answer a prompt or a message. Past it no services process is taking work:
 * Restate keeps the request and admits it when they are back, and the client is answered 202 without an id.
 */
export const ADMISSION_WAIT_MS = 10_000

/** How a request waits for its admission: up to `waitMs`, or held until it answers (`?wait=true`). */
export type AdmissionWait = { kind: 'bounded'; waitMs: number } | { kind: 'held'; signal: AbortSignal; renewMs: number }

/** Admits a prompt in `admission/<tenant>`: its run's id and whether it is queued; undefined when the admission did not answer in time. */
export async function admitPrompt(ingress: RestateIngress, tenant: string, request: PromptAdmissionRequest, wait: AdmissionWait): Promise<{ invocationId: string; queued: boolean } | undefined> {
  const admit = (options: { timeout: number } | { signal: AbortSignal; idempotencyKey: string }) => ingress.client.client(admissionInterface, tenant).admit(request, clients.rpc.opts(options))
  // Held: one idempotency key for every renewal, so each attaches to the same admission instead of asking again.
  const idempotencyKey = `admission-${randomUUID()}`
  const admission = wait.kind === 'held' ? await heldCall(signal => admit({ signal, idempotencyKey }), wait.signal, wait.renewMs) : await answeredWithin(wait.waitMs, admit)
  if (admission === undefined || admission.outcome === 'admitted') return admission
  throw refusalError(admission)
}

/** Saves a steering message through `admission/<tenant>`: its id; undefined when the admission did not answer within `waitMs`. */
export async function admitSteering(ingress: RestateIngress, tenant: string, request: SteeringAdmissionRequest, waitMs: number): Promise<string | undefined> {
  const admission = await answeredWithin(waitMs, options => ingress.client.client(admissionInterface, tenant).steer(request, clients.rpc.opts(options)))
  if (admission === undefined || admission.outcome === 'saved') return admission?.messageId
  throw refusalError(admission)
}

function refusalError(refusal: AdmissionRefusal): GatewayError {
  if (refusal.outcome === 'idempotency_key_reused') {
    return new GatewayError('idempotency_key_reused', 'this Idempotency-Key was used before on this session with another body; the first request stands (use a new key for a new request)')
  }
  return new GatewayError('too_many_runs', `this API key already has ${refusal.maxRuns} runs running or queued; wait for one to end`, { retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS })
}

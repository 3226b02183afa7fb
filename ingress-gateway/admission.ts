import * as clients from '@restatedev/restate-sdk-clients'
import { admissionInterface } from '../contract/admission'
import type { AdmissionRefusal, PromptAdmissionRequest, SteeringAdmissionRequest } from '../contract/admission'
import { GatewayError } from './errors'
import { answeredWithin, type RestateIngress } from './restate-ingress'
import type { AdmissionWait, PromptAdmissions } from './prompt-admissions'
import { BUSY_RETRY_AFTER_SECONDS } from './tenant-limits'

export type { AdmissionWait } from './prompt-admissions'

/**
 * Default wait for the tenant's admission to answer a prompt or a message. Past it no services process is taking work:
 * Restate keeps the request and admits it when they are back, and the client is answered 202 without an id.
 */
export const ADMISSION_WAIT_MS = 10_000

/** Admits a prompt through the gateway's {@link PromptAdmissions}: its run's id and whether it is queued; undefined when the admission did not answer in time. */
export async function admitPrompt(admissions: PromptAdmissions, tenant: string, request: PromptAdmissionRequest, wait: AdmissionWait): Promise<{ invocationId: string; queued: boolean } | undefined> {
  const admission = await admissions.admit(tenant, request, wait)
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

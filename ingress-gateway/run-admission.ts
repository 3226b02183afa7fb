import { GatewayError } from './errors'
import { generatedIdempotencyKey, isKeyOfClient, keyOfClientLength, restateIdempotencyKey } from './idempotency'
import type { RestateClient, SendResult } from './restate-client'
import { tenantRunRows, type RunRow, type SessionKeyLookup } from './restate-queries'
import { stillPending, tallyRuns, type AdmittedSend } from './run-tally'
import { sessionKey } from './tenancy'
import { BUSY_RETRY_AFTER_SECONDS } from './tenant-limits'

/** A request that may start a run: a prompt (`run`), or a steering message (`steering`, a run when the session is idle). */
export interface RunClaim {
  tenant: string
  kind: AdmittedSend['kind']
  sessionKey: string
  /** The client's `Idempotency-Key`, if it sent one. */
  clientKey: string | undefined
  /** `bodyFingerprint` of the request body. */
  fingerprint: string
}

/** An admitted claim: send it to Restate with `idempotencyKey`, then report the outcome with `sent`. */
export interface Admission {
  idempotencyKey: string
  /** Restate's invocation id once the send was accepted, or undefined when it failed (it then counts no more). */
  sent(invocationId: string | undefined): void
}

/**
 * Admits the requests that start runs against a tenant's cap of runs. Each run counts once: Restate's rows count it
 * once they show it, this process's admitted sends until then (they are identified by their idempotency key). A
 * tenant's claims are decided one batch at a time against one read of Restate made after every earlier decision, so a
 * burst cannot overshoot nor double count. Throws 429 `too_many_runs` past the cap and 422 `idempotency_key_reused`
 * for a client key sent before with another body.
 */
export interface RunAdmission {
  admit(claim: RunClaim): Promise<Admission>
}

interface Waiter {
  claim: RunClaim
  resolve(admission: Admission): void
  reject(error: unknown): void
}

interface TenantAdmissions {
  pending: AdmittedSend[]
  waiting: Waiter[]
  deciding: boolean
}

/** What Restate showed of the tenant's runs, or undefined when the admin API did not answer. */
type RunRead = { rows: RunRow[]; truncated: boolean } | undefined

/** Builds the {@link RunAdmission}; `nowMs` is the clock (tests drive it). */
export function createRunAdmission(restate: RestateClient, maxConcurrentRuns: number, nowMs: () => number = Date.now): RunAdmission {
  const tenants = new Map<string, TenantAdmissions>()
  const decideWaiting = async (tenant: string, state: TenantAdmissions): Promise<void> => {
    while (state.waiting.length > 0) {
      const batch = state.waiting.splice(0)
      const read = await readRuns(restate, tenant, state.pending, batch.map(waiter => waiter.claim), maxConcurrentRuns)
      state.pending = stillPending(state.pending, read?.rows, nowMs())
      for (const waiter of batch) settleWaiter(waiter, read, state, maxConcurrentRuns, nowMs())
    }
    state.deciding = false
    if (state.pending.length === 0) tenants.delete(tenant)
  }
  return {
    admit(claim) {
      const state = tenants.get(claim.tenant) ?? { pending: [], waiting: [], deciding: false }
      tenants.set(claim.tenant, state)
      const admitted = new Promise<Admission>((resolve, reject) => state.waiting.push({ claim, resolve, reject }))
      if (!state.deciding) {
        state.deciding = true
        void decideWaiting(claim.tenant, state)
      }
      return admitted
    },
  }
}

function settleWaiter(waiter: Waiter, read: RunRead, state: TenantAdmissions, max: number, nowMs: number): void {
  try {
    const { idempotencyKey, counted } = decide(waiter.claim, read, state.pending, max)
    if (!counted) {
      waiter.resolve({ idempotencyKey, sent: () => undefined })
      return
    }
    const send: AdmittedSend = { kind: waiter.claim.kind, sessionKey: waiter.claim.sessionKey, idempotencyKey, admittedAtMs: nowMs }
    state.pending.push(send)
    waiter.resolve({ idempotencyKey, sent: invocationId => recordSent(state, send, invocationId) })
  } catch (error) {
    waiter.reject(error)
  }
}

function recordSent(state: TenantAdmissions, send: AdmittedSend, invocationId: string | undefined): void {
  if (invocationId !== undefined) send.invocationId = invocationId
  else state.pending = state.pending.filter(other => other !== send)
}

/**
 * The idempotency key of `claim`, and whether it is kept among the pending sends: a repeat of a request Restate or
 * this process has (same key and body) is not, it starts nothing. A prompt, or steering of an idle session, starts a
 * run: refused at the cap. Steering of a busy session joins its runs and is never refused for the cap.
 */
function decide(claim: RunClaim, read: RunRead, pending: readonly AdmittedSend[], max: number): { idempotencyKey: string; counted: boolean } {
  const repeated = repeatedKey(claim, read?.rows ?? [], pending)
  if (repeated !== undefined) return { idempotencyKey: repeated, counted: false }
  const idempotencyKey = claim.clientKey === undefined ? generatedIdempotencyKey() : restateIdempotencyKey(claim.clientKey, claim.fingerprint)
  const tally = tallyRuns(read?.rows ?? [], pending, read?.truncated)
  if (claim.kind === 'steering' && tally.isBusy(claim.sessionKey)) return { idempotencyKey, counted: true }
  if (tally.runs < max) return { idempotencyKey, counted: true }
  throw new GatewayError('too_many_runs', `this API key already has ${max} runs running or queued; wait for one to end`, { retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS })
}

/**
 * The Restate key of an earlier request with the claim's client key and body on the same session route (a key sent
 * before the body was folded in counts as that request), undefined for a new key; throws when the key came with
 * another body.
 */
function repeatedKey(claim: RunClaim, rows: readonly RunRow[], pending: readonly AdmittedSend[]): string | undefined {
  if (claim.clientKey === undefined) return undefined
  const clientKey = claim.clientKey
  const known = [
    ...rows.filter(row => row.sessionKey === claim.sessionKey && row.handler === (claim.kind === 'run' ? 'run' : 'add')).flatMap(row => row.idempotencyKey ?? []),
    ...pending.filter(send => send.sessionKey === claim.sessionKey && send.kind === claim.kind).map(send => send.idempotencyKey),
  ]
  const ownKey = restateIdempotencyKey(clientKey, claim.fingerprint)
  if (known.includes(clientKey)) return clientKey
  if (known.includes(ownKey)) return ownKey
  if (!known.some(key => isKeyOfClient(key, clientKey))) return undefined
  throw new GatewayError('idempotency_key_reused', 'this Idempotency-Key was used before on this session with another body; the first request stands (use a new key for a new request)')
}

/** Reads the tenant's runs and what the pending sends and the claims' keys became; undefined when the admin API fails. */
async function readRuns(restate: RestateClient, tenant: string, pending: readonly AdmittedSend[], claims: readonly RunClaim[], max: number): Promise<RunRead> {
  const callerIds = pending.flatMap(send => (send.kind === 'steering' && send.invocationId !== undefined ? [send.invocationId] : []))
  // Unfinished rows are at most two per counted run; each lookup adds a few.
  const limit = 2 * max + 2 * pending.length + 3 * claims.length + 2
  try {
    const rows = await tenantRunRows(restate, { keyPrefix: sessionKey(tenant, ''), sessions: keyLookups(pending, claims), callerIds, limit })
    return { rows, truncated: rows.length >= limit }
  } catch {
    return undefined
  }
}

/** Per session: the pending sends' keys, and each claim's client key with any fingerprint (and bare, as sent before them). */
function keyLookups(pending: readonly AdmittedSend[], claims: readonly RunClaim[]): SessionKeyLookup[] {
  const sessions = new Map<string, { sessionKey: string; idempotencyKeys: string[]; keyPrefixes: Array<{ prefix: string; length: number }> }>()
  const lookupOf = (key: string) => {
    const lookup = sessions.get(key) ?? { sessionKey: key, idempotencyKeys: [], keyPrefixes: [] }
    sessions.set(key, lookup)
    return lookup
  }
  for (const send of pending) lookupOf(send.sessionKey).idempotencyKeys.push(send.idempotencyKey)
  for (const { sessionKey: key, clientKey } of claims) {
    if (clientKey === undefined) continue
    lookupOf(key).idempotencyKeys.push(clientKey)
    lookupOf(key).keyPrefixes.push({ prefix: `${clientKey}.`, length: keyOfClientLength(clientKey) })
  }
  return [...sessions.values()]
}

/** Admits `claim`, sends it with the admitted idempotency key, and reports the send's outcome to the admission. */
export async function sendAdmitted(admission: RunAdmission, claim: RunClaim, send: (idempotencyKey: string) => Promise<SendResult>): Promise<SendResult> {
  const admitted = await admission.admit(claim)
  try {
    const sent = await send(admitted.idempotencyKey)
    admitted.sent(sent.invocationId)
    return sent
  } catch (error) {
    admitted.sent(undefined)
    throw error
  }
}

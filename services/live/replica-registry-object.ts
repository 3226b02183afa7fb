import * as restate from '@restatedev/restate-sdk'
import { hasValidProof, isHubUrl } from './replica-proof'
import type { DeregisterReplicaRequest, LiveReplica } from '../../contract/live-replicas'
import { LIVE_REPLICAS_STATE_KEY, liveReplicasInterface } from '../../contract/live-replicas'

/** A registered replica as the state keeps it, by URL. Durable shape: add fields, never rename them. */
type Registration = Omit<LiveReplica, 'url'>

/** Most replicas the registry holds; a registration past it is refused (expired ones are dropped first). */
export const MAX_LIVE_REPLICAS = 64
/** Shortest and longest lease a replica may ask for. */
export const MIN_LEASE_MS = 1_000
export const MAX_LEASE_MS = 10 * 60_000
const MAX_INSTANCE_LENGTH = 128

/** Registrations and reads are not worth keeping once answered: no retained invocations pile up. */
const unretained = { journalRetention: 0, idempotencyRetention: 0 }

/** Options of {@link liveReplicasObject}. */
export interface LiveReplicasOptions {
  /** The live token (`ZIDANE_LIVE_TOKEN`) that every claim's proof is checked with; without it nothing registers. */
  token: string | undefined
}

/**
 * The live-replica registry: one virtual object (key `hubs`) where each services replica registers the URL of its
 * live hub with a lease, refreshes it, and deregisters it when it stops cleanly; the gateways read the unexpired
 * ones with the shared `list`, which never waits for a registration. A claim without the proof made with the live
 * token is refused (terminal, 403): the handlers run in the services, the only processes that hold the token besides
 * the gateways.
 */
export function liveReplicasObject(options: LiveReplicasOptions) {
  return restate.implement(liveReplicasInterface, {
    handlers: {
      register: async (ctx, request) => register(ctx, checkedClaim(options.token, request), (request as unknown as { leaseMs?: unknown } | null)?.leaseMs),
      deregister: async (ctx, request) => deregister(ctx, checkedClaim(options.token, request)),
      list,
    },
    options: unretained,
  })
}

async function register(ctx: restate.ObjectContext, claim: DeregisterReplicaRequest, leaseMs: unknown): Promise<void> {
  if (typeof leaseMs !== 'number' || !Number.isInteger(leaseMs) || leaseMs < MIN_LEASE_MS || leaseMs > MAX_LEASE_MS) throw refused(400, `leaseMs must be an integer from ${MIN_LEASE_MS} to ${MAX_LEASE_MS}`)
  const now = await ctx.date.now()
  const replicas = unexpired(await ctx.get<Record<string, Registration>>(LIVE_REPLICAS_STATE_KEY), now)
  if (replicas[claim.url] === undefined && Object.keys(replicas).length >= MAX_LIVE_REPLICAS) throw refused(409, `the registry holds ${MAX_LIVE_REPLICAS} replicas already`)
  replicas[claim.url] = { instance: claim.instance, proof: claim.proof, expiresAtMs: now + leaseMs }
  ctx.set(LIVE_REPLICAS_STATE_KEY, replicas)
}

/** Removes the claim's URL unless a later process (another instance) has registered it since. */
async function deregister(ctx: restate.ObjectContext, claim: DeregisterReplicaRequest): Promise<void> {
  const replicas = unexpired(await ctx.get<Record<string, Registration>>(LIVE_REPLICAS_STATE_KEY), await ctx.date.now())
  if (replicas[claim.url]?.instance === claim.instance) delete replicas[claim.url]
  if (Object.keys(replicas).length === 0) ctx.clear(LIVE_REPLICAS_STATE_KEY)
  else ctx.set(LIVE_REPLICAS_STATE_KEY, replicas)
}

async function list(ctx: restate.ObjectSharedContext): Promise<LiveReplica[]> {
  const replicas = unexpired(await ctx.get<Record<string, Registration>>(LIVE_REPLICAS_STATE_KEY), await ctx.date.now())
  return Object.entries(replicas).map(([url, registration]) => ({ url, ...registration }))
}

/**
 * The claim of a request from the ingress (anyone may call it, with any JSON, `null` included), once its shape and its
 * proof are checked: anything else is a terminal error, never a retried one.
 */
function checkedClaim(token: string | undefined, request: unknown): DeregisterReplicaRequest {
  if (token === undefined) throw refused(503, 'this services process has no ZIDANE_LIVE_TOKEN: it cannot check live hub registrations')
  const { url, instance, proof } = (typeof request === 'object' && request !== null ? request : {}) as Partial<Record<keyof DeregisterReplicaRequest, unknown>>
  if (!isHubUrl(url)) throw refused(400, 'url must be an absolute http(s) URL without credentials, query or fragment')
  if (typeof instance !== 'string' || instance === '' || instance.length > MAX_INSTANCE_LENGTH) throw refused(400, `instance must be a string of 1 to ${MAX_INSTANCE_LENGTH} characters`)
  if (typeof proof !== 'string' || !hasValidProof(token, { url, instance, proof })) throw refused(403, 'the claim does not carry the proof made with the live token')
  return { url, instance, proof }
}

function unexpired(replicas: Record<string, Registration> | null, now: number): Record<string, Registration> {
  return Object.fromEntries(Object.entries(replicas ?? {}).filter(([, registration]) => registration.expiresAtMs > now))
}

function refused(status: number, message: string): restate.TerminalError {
  return new restate.TerminalError(`live replica registry: ${message}`, { errorCode: status })
}

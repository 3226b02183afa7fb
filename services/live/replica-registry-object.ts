import * as restate from '@restatedev/restate-sdk'
import { hasValidProof, isHubUrl } from './replica-proof'
import type { DeregisterReplicaRequest, LiveReplica, SubscribeReplicasRequest, UnsubscribeReplicasRequest, WatchReplicasRequest, WatchReplicasResult } from '../../contract/live-replicas'
import { LIVE_REPLICAS_KEY, LIVE_REPLICAS_STATE_KEY, LIVE_REPLICAS_WATCHERS_STATE_KEY, liveReplicasInterface, liveReplicasWatchInterface, registryVersion } from '../../contract/live-replicas'

/** A registered replica as the state keeps it, by URL. Durable shape: add fields, never rename them. */
type Registration = Omit<LiveReplica, 'url'>

/** Most replicas the registry holds; a registration past it is refused (expired ones are dropped first). */
export const MAX_LIVE_REPLICAS = 64
/** Shortest and longest lease a replica may ask for. */
export const MIN_LEASE_MS = 1_000
export const MAX_LEASE_MS = 10 * 60_000
const MAX_INSTANCE_LENGTH = 128
/** Most gateway waits the registry keeps; past it the oldest is woken with the list (its gateway simply waits again). */
export const MAX_REPLICA_WATCHERS = 64
/** Longest wait `live_replicas_watch/wait` accepts. */
export const MAX_WATCH_MS = 10 * 60_000
const MAX_KNOWN_LENGTH = 64 * 1024

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
      subscribe: async (ctx, request) => subscribe(ctx, checkedSubscription(request)),
      unsubscribe: async (ctx, request) => unsubscribe(ctx, checkedSubscription({ ...request, known: '' })),
    },
    options: unretained,
  })
}

async function register(ctx: restate.ObjectContext, claim: DeregisterReplicaRequest, leaseMs: unknown): Promise<void> {
  if (typeof leaseMs !== 'number' || !Number.isInteger(leaseMs) || leaseMs < MIN_LEASE_MS || leaseMs > MAX_LEASE_MS) throw refused(400, `leaseMs must be an integer from ${MIN_LEASE_MS} to ${MAX_LEASE_MS}`)
  const now = await ctx.date.now()
  const replicas = unexpired(await ctx.get<Record<string, Registration>>(LIVE_REPLICAS_STATE_KEY), now)
  if (replicas[claim.url] === undefined && Object.keys(replicas).length >= MAX_LIVE_REPLICAS) throw refused(409, `the registry holds ${MAX_LIVE_REPLICAS} replicas already`)
  const before = registryVersion(listed(replicas))
  replicas[claim.url] = { instance: claim.instance, proof: claim.proof, expiresAtMs: now + leaseMs }
  ctx.set(LIVE_REPLICAS_STATE_KEY, replicas)
  if (registryVersion(listed(replicas)) !== before) await wakeWatchers(ctx, listed(replicas))
}

/** Removes the claim's URL unless a later process (another instance) has registered it since. */
async function deregister(ctx: restate.ObjectContext, claim: DeregisterReplicaRequest): Promise<void> {
  const replicas = unexpired(await ctx.get<Record<string, Registration>>(LIVE_REPLICAS_STATE_KEY), await ctx.date.now())
  const held = replicas[claim.url]?.instance === claim.instance
  if (held) delete replicas[claim.url]
  if (Object.keys(replicas).length === 0) ctx.clear(LIVE_REPLICAS_STATE_KEY)
  else ctx.set(LIVE_REPLICAS_STATE_KEY, replicas)
  if (held) await wakeWatchers(ctx, listed(replicas))
}

async function list(ctx: restate.ObjectSharedContext): Promise<LiveReplica[]> {
  return listed(unexpired(await ctx.get<Record<string, Registration>>(LIVE_REPLICAS_STATE_KEY), await ctx.date.now()))
}

/**
 * Resolves the wait `awakeableId` with the list once it is not the caller's (`known`): at once when it already is
 * another (a lease ran out since, or a change came before the wait), else at the next registration that changes it.
 */
async function subscribe(ctx: restate.ObjectContext, request: SubscribeReplicasRequest): Promise<void> {
  const [stored, storedWatchers] = await restate.RestatePromise.all([
    ctx.get<Record<string, Registration>>(LIVE_REPLICAS_STATE_KEY) as unknown as restate.RestatePromise<Record<string, Registration> | null>,
    ctx.get<string[]>(LIVE_REPLICAS_WATCHERS_STATE_KEY) as unknown as restate.RestatePromise<string[] | null>,
  ])
  const replicas = listed(unexpired(stored, await ctx.date.now()))
  if (registryVersion(replicas) !== request.known) return ctx.resolveAwakeable<WatchReplicasResult>(request.awakeableId, replicas)
  const watchers = [...(storedWatchers ?? []), request.awakeableId]
  for (const dropped of watchers.splice(0, Math.max(0, watchers.length - MAX_REPLICA_WATCHERS))) ctx.resolveAwakeable<WatchReplicasResult>(dropped, replicas)
  ctx.set(LIVE_REPLICAS_WATCHERS_STATE_KEY, watchers)
}

/** Forgets a wait that timed out. */
async function unsubscribe(ctx: restate.ObjectContext, request: UnsubscribeReplicasRequest): Promise<void> {
  const watchers = (await ctx.get<string[]>(LIVE_REPLICAS_WATCHERS_STATE_KEY)) ?? []
  const left = watchers.filter(id => id !== request.awakeableId)
  if (left.length === watchers.length) return
  if (left.length === 0) ctx.clear(LIVE_REPLICAS_WATCHERS_STATE_KEY)
  else ctx.set(LIVE_REPLICAS_WATCHERS_STATE_KEY, left)
}

/** Wakes every waiting gateway with the list as it now is. */
async function wakeWatchers(ctx: restate.ObjectContext, replicas: LiveReplica[]): Promise<void> {
  const watchers = (await ctx.get<string[]>(LIVE_REPLICAS_WATCHERS_STATE_KEY)) ?? []
  for (const awakeableId of watchers) ctx.resolveAwakeable<WatchReplicasResult>(awakeableId, replicas)
  if (watchers.length > 0) ctx.clear(LIVE_REPLICAS_WATCHERS_STATE_KEY)
}

function listed(replicas: Record<string, Registration>): LiveReplica[] {
  return Object.entries(replicas).map(([url, registration]) => ({ url, ...registration }))
}

/**
 * Parks until the registry's list is not the caller's (`known`), or `timeoutMs` passes (null): an awakeable the
 * registry resolves when a replica registers, leaves or restarts. A gateway following sessions keeps one such wait:
 * while nothing changes it costs no invocation but its renewal once per timeout.
 */
async function wait(ctx: restate.Context, request: WatchReplicasRequest): Promise<WatchReplicasResult> {
  const { known, timeoutMs } = checkedWatch(request)
  const { id, promise } = ctx.awakeable<WatchReplicasResult>()
  const registry = ctx.sendClient(liveReplicasInterface, LIVE_REPLICAS_KEY)
  registry.subscribe({ awakeableId: id, known })
  try {
    return await promise.orTimeout(timeoutMs)
  } catch (error) {
    if (!(error instanceof restate.TimeoutError)) throw error
    registry.unsubscribe({ awakeableId: id })
    return null
  }
}

/** Where a gateway parks until the registry changes (`live_replicas_watch/wait`). */
export const liveReplicasWatchService = restate.service({
  name: liveReplicasWatchInterface.name,
  handlers: { wait: restate.handlers.handler(unretained, wait) },
})

function checkedSubscription(request: unknown): SubscribeReplicasRequest {
  const { awakeableId, known } = (typeof request === 'object' && request !== null ? request : {}) as Partial<Record<keyof SubscribeReplicasRequest, unknown>>
  if (typeof awakeableId !== 'string' || awakeableId === '' || awakeableId.length > 512) throw refused(400, 'awakeableId must be a string of 1 to 512 characters')
  if (typeof known !== 'string' || known.length > MAX_KNOWN_LENGTH) throw refused(400, `known must be a string of at most ${MAX_KNOWN_LENGTH} characters`)
  return { awakeableId, known }
}

function checkedWatch(request: unknown): WatchReplicasRequest {
  const { known, timeoutMs } = (typeof request === 'object' && request !== null ? request : {}) as Partial<Record<keyof WatchReplicasRequest, unknown>>
  if (typeof known !== 'string' || known.length > MAX_KNOWN_LENGTH) throw refused(400, `known must be a string of at most ${MAX_KNOWN_LENGTH} characters`)
  if (typeof timeoutMs !== 'number' || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_WATCH_MS) throw refused(400, `timeoutMs must be an integer from 1 to ${MAX_WATCH_MS}`)
  return { known, timeoutMs }
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

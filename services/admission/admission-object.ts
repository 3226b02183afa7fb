import * as restate from '@restatedev/restate-sdk'
import type { AddMessageRequest, SessionRunRequest } from '../../contract/session'
import { inboxInterface, sessionInterface } from '../../contract/interfaces'
import { admissionInterface } from '../../contract/admission'
import type { ClientIdempotency, EndedRun, PromptAdmission, PromptAdmissionBatch, PromptAdmissionRequest, SteeringAdmission, SteeringAdmissionRequest, WatchedRun } from '../../contract/admission'
import { countedRuns, queuedAhead } from './admitted-runs'
import type { AdmittedRun } from './admitted-runs'

/** State key of the tenant's admitted invocations not yet ended (an {@link AdmittedRun} list). Durable: never rename. */
export const ADMITTED_RUNS_KEY = 'runs'
/** Prefix of the state key holding a session's latest admitted run that ended with an error. Durable: never rename. */
const FAILED_RUN_PREFIX = 'failed_run:'
/** Prefix of the state keys remembering a client key's body fingerprint and what it started. Durable: never rename. */
const IDEMPOTENCY_PREFIX = 'idempotency:'
/** How long a client key is remembered: Restate's default idempotency retention, one day. */
export const CLIENT_KEY_RETENTION_MS = 24 * 60 * 60 * 1000

interface RememberedKey {
  fingerprint: string
  id: string
}

/**
 * `admit` (exclusive): refuses a prompt past the cap, or sends the session's `run` (one-way) and watches it. A client
 * key seen before answers what it started (same body) or a refusal (another body), and counts nothing.
 */
async function admit(ctx: restate.ObjectContext, request: PromptAdmissionRequest): Promise<PromptAdmission> {
  const [admission] = await admitAll(ctx, [request])
  if (!admission) throw new restate.TerminalError('admission: no answer for the prompt')
  return admission
}

/**
 * `admitMany` (exclusive): `admit` for each prompt of a batch, in order, as if they came one after another, in one
 * invocation: the gateway sends the prompts of a tenant that arrive while its last admission is under way together,
 * so a burst costs the tenant's lock a few invocations instead of one per prompt.
 */
async function admitMany(ctx: restate.ObjectContext, batch: PromptAdmissionBatch): Promise<PromptAdmission[]> {
  return admitAll(ctx, batch.requests)
}

/** What one prompt of a batch comes to before its run's invocation id is known. */
type Sending = { outcome: 'sending'; request: PromptAdmissionRequest; queued: boolean; invocationId: Promise<string> }
type PendingAdmission = PromptAdmission | Sending | { outcome: 'repeat'; of: Sending }

/**
 * Decides the prompts in order (the runs listed, the keys remembered and the runs sent by those before each count for
 * it), sends the admitted runs, then waits for their invocation ids together: one round trip for the reads and one
 * for the sends, whatever the batch's size.
 */
async function admitAll(ctx: restate.ObjectContext, requests: readonly PromptAdmissionRequest[]): Promise<PromptAdmission[]> {
  const [runs, remembered] = await readForAdmission(ctx, requests)
  const started: AdmittedRun[] = []
  // Keys this batch sends a run for: a later prompt with the same key answers what that one started.
  const sentFor = new Map<string, Sending>()
  const pending: PendingAdmission[] = requests.map(request => {
    const key = request.idempotency ? idempotencyKeyOf('prompts', request.sessionKey, request.idempotency) : undefined
    const known = key === undefined ? undefined : remembered.get(key) ?? sentFor.get(key)?.request.idempotency
    if (known && known.fingerprint !== request.idempotency?.fingerprint) return { outcome: 'idempotency_key_reused' }
    const repeated = key === undefined ? undefined : sentFor.get(key)
    if (repeated) return { outcome: 'repeat', of: repeated }
    if (known && 'id' in known) return { outcome: 'admitted', invocationId: known.id, queued: queuedAhead([...runs, ...started], request.sessionKey, known.id) }
    if (countedRuns([...runs, ...started]) >= request.maxRuns) return { outcome: 'too_many_runs', maxRuns: request.maxRuns }
    const queued = queuedAhead([...runs, ...started], request.sessionKey)
    const options = restate.rpc.sendOpts<SessionRunRequest>(request.idempotency ? { idempotencyKey: restateIdempotencyKey(request.idempotency) } : {})
    const invocationId = ctx.sendClient(sessionInterface, request.sessionKey).run(request.run, options).invocationId
    // Listed now, its id filled in below: the prompts after it count it and queue behind it.
    started.push({ sessionKey: request.sessionKey, invocationId: '', kind: 'prompt' })
    const sending: Sending = { outcome: 'sending', request, queued, invocationId }
    if (key !== undefined) sentFor.set(key, sending)
    return sending
  })
  const sending = pending.filter((admission): admission is Sending => admission.outcome === 'sending')
  // Awaited in order: the first await sends every run, and their ids come back together.
  const admitted: Array<{ admission: Sending; invocationId: string }> = []
  for (const admission of sending) admitted.push({ admission, invocationId: await admission.invocationId })
  for (const { admission, invocationId } of admitted) rememberKey(ctx, 'prompts', admission.request, invocationId)
  // One watch for the batch's runs: each one's end is reported as it comes.
  watchRuns(ctx, admitted.map(({ admission, invocationId }) => ({ sessionKey: admission.request.sessionKey, invocationId })))
  if (admitted.length > 0) ctx.set<AdmittedRun[]>(ADMITTED_RUNS_KEY, [...runs, ...admitted.map(({ admission, invocationId }) => ({ sessionKey: admission.request.sessionKey, invocationId, kind: 'prompt' as const }))])
  const idOf = new Map(admitted.map(({ admission, invocationId }) => [admission, invocationId]))
  return pending.map(admission => {
    if (admission.outcome === 'sending') return { outcome: 'admitted', invocationId: idOf.get(admission) ?? '', queued: admission.queued }
    if (admission.outcome === 'repeat') return { outcome: 'admitted', invocationId: idOf.get(admission.of) ?? '', queued: admission.of.queued }
    return admission
  })
}

/** The tenant's listed runs and the remembered client keys of `requests`, read in one round trip. */
async function readForAdmission(ctx: restate.ObjectContext, requests: readonly PromptAdmissionRequest[]): Promise<[AdmittedRun[], Map<string, RememberedKey>]> {
  const keys = [...new Set(requests.flatMap(request => request.idempotency ? [idempotencyKeyOf('prompts', request.sessionKey, request.idempotency)] : []))]
  const reads = [ADMITTED_RUNS_KEY, ...keys].map(key => ctx.get<unknown>(key) as unknown as restate.RestatePromise<unknown>)
  const [runs, ...values] = await restate.RestatePromise.all(reads)
  const remembered = new Map<string, RememberedKey>()
  keys.forEach((key, index) => { const value = values[index] as RememberedKey | null | undefined; if (value) remembered.set(key, value) })
  return [(runs as AdmittedRun[] | null) ?? [], remembered]
}

/**
 * `steer` (exclusive): saves a message in the session's inbox (the call returns once the inbox holds it). A session
 * with no admitted invocation gets a run from it, refused past the cap. Then a `deliver` follows the message on the
 * session and is watched: the session runs its invocations in order, so when it ends, the run that took the message
 * (the running one at a turn boundary, or the `deliver` the inbox scheduled) has ended too.
 */
async function steer(ctx: restate.ObjectContext, request: SteeringAdmissionRequest): Promise<SteeringAdmission> {
  const remembered = await rememberedKey(ctx, 'messages', request)
  if (remembered?.sameBody === false) return { outcome: 'idempotency_key_reused' }
  if (remembered) return { outcome: 'saved', messageId: remembered.id }
  const runs = await admittedRuns(ctx)
  const busy = runs.some(run => run.sessionKey === request.sessionKey)
  if (!busy && countedRuns(runs) >= request.maxRuns) return { outcome: 'too_many_runs', maxRuns: request.maxRuns }
  const options = restate.rpc.opts<AddMessageRequest, { id: string }>(request.idempotency ? { idempotencyKey: restateIdempotencyKey(request.idempotency) } : {})
  const { id } = await ctx.client(inboxInterface, request.sessionKey).add({ text: request.text }, options)
  const invocationId = await ctx.sendClient(sessionInterface, request.sessionKey).deliver().invocationId
  const run: AdmittedRun = { sessionKey: request.sessionKey, invocationId, kind: 'steering' }
  ctx.set<AdmittedRun[]>(ADMITTED_RUNS_KEY, [...runs, run])
  watchRuns(ctx, [run])
  rememberKey(ctx, 'messages', request, id)
  return { outcome: 'saved', messageId: id }
}

/** Starts one watch of admitted invocations (the caller lists them in `runs`). */
function watchRuns(ctx: restate.ObjectContext, runs: readonly WatchedRun[]): void {
  if (runs.length > 0) ctx.sendClient(admissionInterface, ctx.key).watchAll(runs.map(run => ({ sessionKey: run.sessionKey, invocationId: run.invocationId })))
}

/**
 * `watchAll` (shared, so it holds no lock while it waits): attaches to each invocation of a batch, however it ends
 * (completed, failed, cancelled, or killed by Restate without running any of its code), and reports each end to
 * `ended` as it comes, in the journal's order: one invocation watches a whole admission batch.
 */
async function watchAll(ctx: restate.ObjectSharedContext, runs: readonly WatchedRun[]): Promise<void> {
  let waiting = runs.map(run => ({ run, end: ctx.invocation(restate.InvocationIdParser.fromString(run.invocationId)).attach()
    .map((_value, failure): EndedRun => ({ ...run, failed: failure !== undefined })) }))
  while (waiting.length > 0) {
    let end: EndedRun
    try {
      end = await restate.RestatePromise.race(waiting.map(each => each.end))
    } catch (error) {
      // The watch itself was cancelled: the runs it still waited for are reported ended, so no slot stays taken.
      if (!(error instanceof restate.TerminalError)) throw error
      for (const { run } of waiting) ctx.sendClient(admissionInterface, ctx.key).ended({ ...run, failed: true })
      return
    }
    ctx.sendClient(admissionInterface, ctx.key).ended(end)
    waiting = waiting.filter(each => each.run.invocationId !== end.invocationId)
  }
}

/** `ended` (exclusive): frees the invocation's slot and keeps (or forgets) the session's failed run. */
async function ended(ctx: restate.ObjectContext, run: EndedRun): Promise<void> {
  const runs = await admittedRuns(ctx)
  const ending = runs.find(admitted => admitted.invocationId === run.invocationId)
  ctx.set<AdmittedRun[]>(ADMITTED_RUNS_KEY, runs.filter(admitted => admitted !== ending))
  if (ending?.kind !== 'prompt') return
  if (run.failed) ctx.set(failedRunKey(run.sessionKey), run.invocationId)
  else ctx.clear(failedRunKey(run.sessionKey))
}

async function admittedRuns(ctx: restate.ObjectContext): Promise<AdmittedRun[]> {
  return (await ctx.get<AdmittedRun[]>(ADMITTED_RUNS_KEY)) ?? []
}

function failedRunKey(sessionKey: string): string {
  return `${FAILED_RUN_PREFIX}${sessionKey}`
}

function idempotencyKeyOf(route: 'prompts' | 'messages', sessionKey: string, idempotency: ClientIdempotency): string {
  return `${IDEMPOTENCY_PREFIX}${route}:${sessionKey}:${idempotency.key}`
}

/** What a client key started before, and whether it came with the same body; undefined for a new key (or none). */
async function rememberedKey(ctx: restate.ObjectContext, route: 'prompts' | 'messages', request: { sessionKey: string; idempotency?: ClientIdempotency }): Promise<{ id: string; sameBody: boolean } | undefined> {
  if (!request.idempotency) return undefined
  const remembered = await ctx.get<RememberedKey>(idempotencyKeyOf(route, request.sessionKey, request.idempotency))
  return remembered ? { id: remembered.id, sameBody: remembered.fingerprint === request.idempotency.fingerprint } : undefined
}

/** Remembers a client key for {@link CLIENT_KEY_RETENTION_MS}, then forgets it (a delayed `forget`). */
function rememberKey(ctx: restate.ObjectContext, route: 'prompts' | 'messages', request: { sessionKey: string; idempotency?: ClientIdempotency }, id: string): void {
  if (!request.idempotency) return
  const stateKey = idempotencyKeyOf(route, request.sessionKey, request.idempotency)
  ctx.set<RememberedKey>(stateKey, { fingerprint: request.idempotency.fingerprint, id })
  ctx.sendClient(admissionInterface, ctx.key).forget(stateKey, restate.rpc.sendOpts({ delay: CLIENT_KEY_RETENTION_MS }))
}

/**
 * The idempotency key of what a client key starts: the client's key with the body's fingerprint, so Restate tells
 * two bodies apart too (the format the gateway sent before the admission existed: those keys still match).
 */
function restateIdempotencyKey(idempotency: ClientIdempotency): string {
  return `${idempotency.key}.${idempotency.fingerprint}`
}

/** Nothing worth keeping once answered: the admission keeps what it needs in its state. */
const unretained = { journalRetention: 0 }

/**
 * The admission of a tenant's runs (`admission/<tenant>`), see `contract/admission.ts` and docs/design/admission.md.
 * Its state is read lazily: a tenant's remembered keys and failed runs are many, a decision needs a few of them.
 */
export const admissionObject = restate.implement(admissionInterface, {
  handlers: {
    admit,
    admitMany,
    steer,
    failedRun: async (ctx: restate.ObjectSharedContext, sessionKey: string) => (await ctx.get<string>(failedRunKey(sessionKey))) ?? null,
    admittedPrompts: async (ctx: restate.ObjectSharedContext, sessionKey: string) =>
      ((await ctx.get<AdmittedRun[]>(ADMITTED_RUNS_KEY)) ?? []).filter(run => run.sessionKey === sessionKey && run.kind === 'prompt').map(run => run.invocationId),
    // Sent by admissions of earlier releases still in flight: one run, watched as a batch of one.
    watch: (ctx: restate.ObjectSharedContext, run: WatchedRun) => watchAll(ctx, [run]),
    watchAll,
    ended,
    forget: async (ctx: restate.ObjectContext, stateKey: string) => {
      if (stateKey.startsWith(IDEMPOTENCY_PREFIX)) ctx.clear(stateKey)
    },
  },
  options: { enableLazyState: true, ...unretained },
})

import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import * as clients from '@restatedev/restate-sdk-clients'
import { admissionInterface } from '../contract/admission'
import type { PromptAdmission, PromptAdmissionRequest } from '../contract/admission'
import { GatewayError } from './errors'
import { answeredWithin, heldCall, MAX_HOLD_MS, type RestateIngress } from './restate-ingress'

/** How a request waits for its admission: up to `waitMs`, or held until it answers (`?wait=true`). */
export type AdmissionWait = { kind: 'bounded'; waitMs: number } | { kind: 'held'; signal: AbortSignal; renewMs: number }

/**
 * Longest a prompt waits in the gateway for its tenant's admission call under way before it is sent on its own: a
 * prompt told "Restate keeps it" must have reached Restate, so none waits here long.
 */
export const BATCH_WAIT_MS = 200
/** Shortest time a batch's call is let run, even when every prompt in it stopped waiting: enough to reach Restate. */
export const MIN_CALL_MS = 1_000
/** Most prompts one `admitMany` call carries. */
export const MAX_BATCH = 64
/**
 * Most bytes of prompts (their JSON) one `admitMany` call carries; a prompt larger than this goes on its own. Each
 * prompt is within the gateway's body limit (1 MiB by default), but 64 of them are not within what Restate's ingress
 * takes in one request: it drops the connection, and every prompt of the batch would fail.
 */
export const MAX_BATCH_BYTES = 4 * 1024 * 1024

/** A prompt waiting for its admission. */
class PendingPrompt {
  readonly answered: Promise<PromptAdmission>
  settle: { answer: (admission: PromptAdmission) => void; fail: (error: unknown) => void } = { answer: () => undefined, fail: () => undefined }
  /** Aborts when the client stopped waiting: a bounded wait ran out, or a held client went away. */
  readonly gaveUp: AbortSignal

  constructor(readonly request: PromptAdmissionRequest, readonly wait: AdmissionWait) {
    this.answered = new Promise<PromptAdmission>((answer, fail) => { this.settle = { answer, fail } })
    this.answered.catch(() => undefined) // a prompt that gave up first is not waited for
    this.gaveUp = wait.kind === 'held' ? wait.signal : AbortSignal.timeout(wait.waitMs)
  }

  /** The size of the prompt's JSON in a batch, in bytes (measured when it is batched, once). */
  bytes(): number {
    return this.size ??= Buffer.byteLength(JSON.stringify(this.request))
  }

  private size: number | undefined

  /** The admission, or undefined once a bounded wait ran out (Restate holds the call and admits it later). */
  async outcome(): Promise<PromptAdmission | undefined> {
    if (this.wait.kind === 'held') return this.answered
    const timedOut = new Promise<undefined>(resolve => { this.gaveUp.addEventListener('abort', () => resolve(undefined), { once: true }) })
    return Promise.race([this.answered, timedOut])
  }
}

/** How many of the first `waiting` prompts go in one batch: at least one, within {@link MAX_BATCH} and {@link MAX_BATCH_BYTES}. */
function batchLength(waiting: readonly PendingPrompt[]): number {
  let bytes = 0
  let length = 0
  for (const prompt of waiting.slice(0, MAX_BATCH)) {
    bytes += prompt.bytes()
    if (length > 0 && bytes > MAX_BATCH_BYTES) break
    length += 1
  }
  return length
}

/**
 * Aborts once every prompt of `prompts` stopped waiting, never before {@link MIN_CALL_MS}: every prompt sent reaches
 * Restate, even one whose client stopped waiting while it was still in the gateway.
 */
function stopWhenAllGaveUp(prompts: readonly PendingPrompt[]): AbortSignal {
  const allGaveUp = new AbortController()
  const sentLongEnough = sleep(MIN_CALL_MS, undefined, { ref: false })
  const stopAfterMinimum = (): void => { void sentLongEnough.then(() => { allGaveUp.abort() }) }
  const waiting = prompts.filter(prompt => !prompt.gaveUp.aborted)
  let left = waiting.length
  for (const prompt of waiting) prompt.gaveUp.addEventListener('abort', () => { if (--left === 0) stopAfterMinimum() }, { once: true })
  if (left === 0) stopAfterMinimum()
  return allGaveUp.signal
}

/** A tenant's prompts: how many admission calls are under way, and the prompts waiting for one to end. */
interface TenantLane { calls: number; waiting: PendingPrompt[]; timer: NodeJS.Timeout | undefined }

/**
 * The gateway's admission of prompts, one lane per tenant. A prompt that finds no call of its tenant under way is
 * admitted at once (`admission/<tenant>/admit`); the prompts that arrive while one is under way wait for it to end,
 * at most {@link BATCH_WAIT_MS}, and go together in one `admitMany`. The tenant's admission object decides one
 * invocation at a time, so a burst of prompts costs it a few invocations instead of one each; an idle tenant's prompt
 * waits for nothing.
 */
export class PromptAdmissions {
  private readonly lanes = new Map<string, TenantLane>()

  constructor(private readonly ingress: RestateIngress) {}

  /** Admits `request` for `tenant`: the admission, or undefined when a bounded wait ran out first. */
  async admit(tenant: string, request: PromptAdmissionRequest, wait: AdmissionWait): Promise<PromptAdmission | undefined> {
    const prompt = new PendingPrompt(request, wait)
    const lane = this.lanes.get(tenant) ?? { calls: 0, waiting: [], timer: undefined }
    this.lanes.set(tenant, lane)
    if (lane.calls === 0) this.send(tenant, lane, [prompt])
    else {
      lane.waiting.push(prompt)
      lane.timer ??= setTimeout(() => { this.sendWaiting(tenant, lane) }, BATCH_WAIT_MS)
    }
    return prompt.outcome()
  }

  /**
   * Sends the waiting prompts of `lane` (a batch at most {@link MAX_BATCH} long and {@link MAX_BATCH_BYTES} large; the
   * rest wait for it).
   */
  private sendWaiting(tenant: string, lane: TenantLane): void {
    clearTimeout(lane.timer)
    lane.timer = undefined
    if (lane.waiting.length === 0) return
    this.send(tenant, lane, lane.waiting.splice(0, batchLength(lane.waiting)))
    if (lane.waiting.length > 0) lane.timer = setTimeout(() => { this.sendWaiting(tenant, lane) }, BATCH_WAIT_MS)
  }

  private send(tenant: string, lane: TenantLane, prompts: readonly PendingPrompt[]): void {
    lane.calls += 1
    const call = prompts.length === 1 && prompts[0] ? this.admitOne(tenant, prompts[0]) : this.admitBatch(tenant, prompts)
    void call.finally(() => {
      lane.calls -= 1
      if (lane.waiting.length > 0) this.sendWaiting(tenant, lane)
      else if (lane.calls === 0 && this.lanes.get(tenant) === lane) this.lanes.delete(tenant)
    })
  }

  /**
   * One prompt: `admit`, bounded by its wait, or held with one idempotency key for every renewal (as long as its client
   * waits, and at least {@link MIN_CALL_MS}, as a batch's call).
   */
  private async admitOne(tenant: string, prompt: PendingPrompt): Promise<void> {
    const admit = (options: { timeout: number } | { signal: AbortSignal; idempotencyKey: string }) => this.ingress.client.client(admissionInterface, tenant).admit(prompt.request, clients.rpc.opts(options))
    try {
      const { wait } = prompt
      const idempotencyKey = `admission-${randomUUID()}`
      const admission = wait.kind === 'held' ? await heldCall(signal => admit({ signal, idempotencyKey }), stopWhenAllGaveUp([prompt]), wait.renewMs) : await answeredWithin(wait.waitMs, admit)
      // Unanswered within a bounded wait: the prompt gave up at the same time (Restate keeps the call).
      if (admission !== undefined) prompt.settle.answer(admission)
    } catch (error) {
      prompt.settle.fail(error)
    }
  }

  /**
   * Several prompts: one `admitMany`, held (with one idempotency key, so a renewal attaches to the same invocation)
   * until it answers or every prompt of it gave up; Restate keeps a call left unanswered and admits its prompts later.
   */
  private async admitBatch(tenant: string, prompts: readonly PendingPrompt[]): Promise<void> {
    const idempotencyKey = `admission-${randomUUID()}`
    const renewMs = Math.min(MAX_HOLD_MS, ...prompts.map(prompt => (prompt.wait.kind === 'held' ? prompt.wait.renewMs : MAX_HOLD_MS)))
    try {
      const admissions = await heldCall(signal => this.ingress.client.client(admissionInterface, tenant).admitMany({ requests: prompts.map(prompt => prompt.request) }, clients.rpc.opts({ signal, idempotencyKey })), stopWhenAllGaveUp(prompts), renewMs)
      prompts.forEach((prompt, index) => {
        const admission = admissions[index]
        if (admission) prompt.settle.answer(admission)
        else prompt.settle.fail(new GatewayError('restate_error', `the admission answered ${admissions.length} of ${prompts.length} prompts`))
      })
    } catch (error) {
      for (const prompt of prompts) prompt.settle.fail(error)
    }
  }
}

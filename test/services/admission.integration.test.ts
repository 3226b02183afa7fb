import * as restate from '@restatedev/restate-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PromptAdmission, PromptAdmissionRequest, SteeringAdmission, SteeringAdmissionRequest } from '../../contract/admission'
import { admissionObject } from '../../services/admission/admission-object'
import type { InboxMessage, SessionRunRequest } from '../../contract/session'
import { INBOX_SERVICE, SESSION_SERVICE } from '../../contract/session'
import { inboxObject } from '../../services/inbox/inbox-object'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'
import type { RestateHarness } from '../helpers/restate/restate-harness'

/** The awakeable each parked run waits on, by session key: the test ends a run by resolving or rejecting it. */
const parked = new Map<string, string>()

const Inbox = { name: INBOX_SERVICE } as typeof inboxObject

/**
 * Stands in for the session object: `run` and `deliver` (which takes the inbox's messages, as the real one does) act
 * on their prompt: `park` waits for the test, `fail` fails for good, `crash` fails every attempt until Restate kills
 * it, anything else ends at once.
 */
const session = restate.object({
  name: SESSION_SERVICE,
  handlers: {
    run: restate.handlers.object.exclusive({ retryPolicy: { maxAttempts: 2, onMaxAttempts: 'kill', initialInterval: 20 } }, async (ctx: restate.ObjectContext, request: SessionRunRequest) => act(ctx, request.prompt)),
    deliver: async (ctx: restate.ObjectContext) => {
      const messages: InboxMessage[] = await ctx.objectClient(Inbox, ctx.key).take({ forDelivery: true })
      return messages.length === 0 ? null : act(ctx, messages.map(message => message.text).join('\n'))
    },
  },
})

async function act(ctx: restate.ObjectContext, prompt: string): Promise<string> {
  if (prompt === 'fail') throw new restate.TerminalError('failed for good')
  if (prompt === 'crash') throw new Error('crashes every attempt')
  if (prompt !== 'park') return 'done'
  const awakeable = ctx.awakeable<string>()
  parked.set(ctx.key, awakeable.id)
  return awakeable.promise
}

describe.each(REPLAY_MODES)('the admission object ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => { harness = await startRestateHarness({ services: [admissionObject, inboxObject, session], alwaysReplay }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  let tenants = 0
  /** A tenant of its own per test: `t<n>`, its sessions `t<n>~<id>`. */
  const newTenant = (): { admit: (sessionId: string, prompt: string, extra?: Partial<PromptAdmissionRequest>) => Promise<PromptAdmission>; steer: (sessionId: string, text: string, extra?: Partial<SteeringAdmissionRequest>) => Promise<SteeringAdmission>; key: (sessionId: string) => string; failedRun: (sessionId: string) => Promise<string | null>; admitMany: (prompts: Array<[string, string, Partial<PromptAdmissionRequest>?]>) => Promise<PromptAdmission[]> } => {
    const tenant = `${alwaysReplay ? 'r' : 'n'}${++tenants}`
    const key = (sessionId: string): string => `${tenant}~${sessionId}`
    return {
      key,
      admit: async (sessionId, prompt, extra = {}) => (await h().call<PromptAdmission>(`admission/${tenant}/admit`, { sessionKey: key(sessionId), run: { prompt }, maxRuns: 2, ...extra })).body,
      steer: async (sessionId, text, extra = {}) => (await h().call<SteeringAdmission>(`admission/${tenant}/steer`, { sessionKey: key(sessionId), text, maxRuns: 2, ...extra })).body,
      failedRun: async (sessionId) => (await h().call<string | null>(`admission/${tenant}/failedRun`, key(sessionId))).body,
      admitMany: async (prompts) => (await h().call<PromptAdmission[]>(`admission/${tenant}/admitMany`, { requests: prompts.map(([sessionId, prompt, extra = {}]) => ({ sessionKey: key(sessionId), run: { prompt }, maxRuns: 2, ...extra })) })).body,
    }
  }
  const parkedRun = (key: string): Promise<string> => h().waitFor(() => parked.get(key), 20_000, `the parked run of ${key}`)
  const finish = async (key: string, value = 'ok'): Promise<void> => {
    const id = await parkedRun(key)
    parked.delete(key)
    expect(await h().resolveAwakeable(id, value)).toBeLessThan(300)
  }
  /** Admits `prompt` once a slot is free (the watch frees it a moment after the run ended). */
  const admittedOnceFree = (admit: () => Promise<PromptAdmission>): Promise<PromptAdmission> =>
    h().waitFor(async () => { const admission = await admit(); return admission.outcome === 'admitted' ? admission : undefined }, 20_000, 'a free slot')

  it('admits up to the cap, queues a second prompt of a session, refuses past the cap, and frees a slot when a run completes', async () => {
    const t = newTenant()
    const first = await t.admit('a', 'park')
    expect(first).toEqual({ outcome: 'admitted', invocationId: expect.stringMatching(/^inv_/), queued: false })
    expect(await t.admit('a', 'park')).toMatchObject({ outcome: 'admitted', queued: true })
    expect(await t.admit('b', 'park')).toEqual({ outcome: 'too_many_runs', maxRuns: 2 })
    await finish(t.key('a'))
    if (first.outcome === 'admitted') expect((await h().attach(first.invocationId)).body).toBe('ok')
    expect(await admittedOnceFree(() => t.admit('b', 'park'))).toMatchObject({ queued: false })
    expect(await t.failedRun('a')).toBeNull()
  })

  it('frees the slot of a run that failed, was cancelled, was killed, or was killed by Restate after its attempts; remembers the failure', async () => {
    const t = newTenant()
    const ended = async (sessionId: string, prompt: string, end?: 'cancel' | 'kill'): Promise<string> => {
      const admission = await t.admit(sessionId, prompt)
      if (admission.outcome !== 'admitted') throw new Error(`not admitted: ${JSON.stringify(admission)}`)
      if (end) {
        await parkedRun(t.key(sessionId))
        expect((await fetch(`${h().adminUrl}/invocations/${admission.invocationId}/${end}`, { method: 'PATCH' })).status).toBeLessThan(300)
      }
      expect((await h().attach(admission.invocationId)).status).toBeGreaterThanOrEqual(400)
      await admittedOnceFree(() => t.admit('probe', 'done', { maxRuns: 1 }))
      return admission.invocationId
    }
    for (const [sessionId, prompt, end] of [['f', 'fail'], ['c', 'park', 'cancel'], ['k', 'park', 'kill'], ['x', 'crash']] as const) {
      const invocationId = await ended(sessionId, prompt, end)
      expect(await t.failedRun(sessionId), sessionId).toBe(invocationId)
    }
  })

  it('counts steering that starts a run on an idle session until that run ends; steering of a busy session joins it', async () => {
    const t = newTenant()
    const saved = await t.steer('idle', 'park')
    expect(saved).toEqual({ outcome: 'saved', messageId: expect.stringMatching(/^inv_/) })
    await parkedRun(t.key('idle'))
    expect(await t.admit('a', 'park')).toMatchObject({ outcome: 'admitted' })
    expect(await t.steer('other', 'park')).toEqual({ outcome: 'too_many_runs', maxRuns: 2 })
    expect(await t.admit('b', 'park')).toEqual({ outcome: 'too_many_runs', maxRuns: 2 })
    // At the cap, a message to a busy session is taken (it joins that session's run or follows it).
    expect(await t.steer('a', 'and also')).toMatchObject({ outcome: 'saved' })
    expect(await t.steer('idle', 'more')).toMatchObject({ outcome: 'saved' })
    await finish(t.key('idle'))
    expect(await admittedOnceFree(() => t.admit('b', 'done'))).toMatchObject({ outcome: 'admitted' })
  })

  it('admits a batch as the same prompts one after another: the cap, the queue and the client keys count those before', async () => {
    const t = newTenant()
    const k = { key: 'k-batch', fingerprint: 'f1' }
    const batch = await t.admitMany([['a', 'park', { idempotency: k }], ['a', 'park', { idempotency: k }], ['a', 'park', { idempotency: { ...k, fingerprint: 'f2' } }], ['a', 'park'], ['b', 'park']])
    expect(batch).toEqual([
      { outcome: 'admitted', invocationId: expect.stringMatching(/^inv_/), queued: false },
      batch[0],
      { outcome: 'idempotency_key_reused' },
      { outcome: 'admitted', invocationId: expect.stringMatching(/^inv_/), queued: true },
      { outcome: 'too_many_runs', maxRuns: 2 },
    ])
    expect(batch[3]).not.toEqual(batch[0])
    // The batch's key is remembered as an `admit` of its own would have left it; its runs hold the slots.
    expect(await t.admit('a', 'park', { idempotency: k })).toEqual(batch[0])
    expect(await t.admit('c', 'park')).toEqual({ outcome: 'too_many_runs', maxRuns: 2 })
    await finish(t.key('a'))
    await finish(t.key('a'))
    expect(await admittedOnceFree(() => t.admit('c', 'done'))).toMatchObject({ queued: false })
  })

  it('watches a batch\'s runs in one invocation and frees each slot as its run ends, in any order, a failure remembered', async () => {
    const t = newTenant()
    const batch = await t.admitMany([['a', 'park'], ['b', 'park']])
    expect(batch.map(admission => admission.outcome)).toEqual(['admitted', 'admitted'])
    // The tenant's watches while both runs wait: one for the batch, not one per run.
    const tenant = t.key('').slice(0, -1)
    const watches = (): Promise<Array<{ handler: string }>> => h().query(`SELECT target_handler_name AS handler FROM sys_invocation WHERE target_service_name = 'admission' AND target_service_key = '${tenant}' AND target_handler_name LIKE 'watch%' AND status <> 'completed'`)
    await h().waitFor(async () => (await watches()).length > 0, 10_000, 'the batch\'s watch')
    await new Promise(resolve => setTimeout(resolve, 300))
    expect(await watches()).toEqual([{ handler: 'watchAll' }])
    expect(await t.admit('c', 'park')).toEqual({ outcome: 'too_many_runs', maxRuns: 2 })
    await finish(t.key('b')) // the second run ends first: its slot is free while the first still runs
    expect(await admittedOnceFree(() => t.admit('c', 'done'))).toMatchObject({ queued: false })
    const id = await parkedRun(t.key('a'))
    parked.delete(t.key('a'))
    const rejected = await fetch(`${h().ingressUrl}/restate/awakeables/${id}/reject`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'no' })
    expect(rejected.status).toBeLessThan(300)
    const failed = batch[0]?.outcome === 'admitted' ? batch[0].invocationId : ''
    await h().waitFor(async () => (await t.failedRun('a')) === failed, 20_000, 'the failed run to be remembered')
    expect(await admittedOnceFree(() => t.admit('d', 'done'))).toMatchObject({ queued: false })
  })

  it('frees the slots of a batch whose watch an operator cancelled', async () => {
    const t = newTenant()
    expect((await t.admitMany([['a', 'park'], ['b', 'park']])).map(admission => admission.outcome)).toEqual(['admitted', 'admitted'])
    const tenant = t.key('').slice(0, -1)
    const watch = await h().waitFor(async () => (await h().query<{ id: string }>(`SELECT id FROM sys_invocation WHERE target_service_name = 'admission' AND target_service_key = '${tenant}' AND target_handler_name = 'watchAll' AND status <> 'completed'`))[0]?.id, 10_000, 'the batch\'s watch')
    expect(await h().cancel(watch)).toBeLessThan(300)
    expect(await admittedOnceFree(() => t.admit('c', 'done'))).toMatchObject({ queued: false })
    await finish(t.key('a'))
    await finish(t.key('b'))
  })

  it('answers a repeated client key with what it started, refuses it with another body, per session and route', async () => {
    const t = newTenant()
    const idempotency = { key: 'k-1', fingerprint: 'f1' }
    const first = await t.admit('a', 'done', { idempotency })
    expect(first).toMatchObject({ outcome: 'admitted' })
    expect(await t.admit('a', 'done', { idempotency })).toEqual(first.outcome === 'admitted' ? { ...first, queued: false } : first)
    expect(await t.admit('a', 'other', { idempotency: { key: 'k-1', fingerprint: 'f2' } })).toEqual({ outcome: 'idempotency_key_reused' })
    expect(await t.admit('b', 'other', { idempotency: { key: 'k-1', fingerprint: 'f2' } })).toMatchObject({ outcome: 'admitted' })
    const message = await t.steer('a', 'hi', { idempotency })
    expect(message).toMatchObject({ outcome: 'saved' })
    expect(await t.steer('a', 'hi', { idempotency })).toEqual(message)
    expect(await t.steer('a', 'ho', { idempotency: { key: 'k-1', fingerprint: 'f3' } })).toEqual({ outcome: 'idempotency_key_reused' })
  })
})

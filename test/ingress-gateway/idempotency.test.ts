import type { FastifyInstance } from 'fastify'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bodyFingerprint, isKeyOfClient, restateIdempotencyKey } from '../../ingress-gateway/idempotency'
import { sessionKey, tenantOf } from '../../ingress-gateway/tenancy'
import { fakeInvocations, type FakeInvocations } from './helpers/fake-invocations'
import { startFakeRestate, type FakeRestate } from './helpers/fake-restate'
import { bearer, KEY_A, testGateway } from './helpers/gateway'

describe('body fingerprints', () => {
  it('ignores object key order and tells any other body apart', () => {
    expect(bodyFingerprint({ prompt: 'p', maxTurns: 3, policy: { deny: ['shell'], approve: [] } })).toBe(bodyFingerprint({ policy: { approve: [], deny: ['shell'] }, maxTurns: 3, prompt: 'p' }))
    expect(bodyFingerprint({ prompt: 'p' })).not.toBe(bodyFingerprint({ prompt: 'p ' }))
    expect(bodyFingerprint({ prompt: 'p', maxTurns: 3 })).not.toBe(bodyFingerprint({ prompt: 'p', maxTurns: '3' }))
  })

  it('folds the fingerprint into a key that names its client key exactly', () => {
    const key = restateIdempotencyKey('k.1', bodyFingerprint({ text: 't' }))
    expect(isKeyOfClient(key, 'k.1')).toBe(true)
    expect(isKeyOfClient(key, 'k')).toBe(false)
    expect(isKeyOfClient(restateIdempotencyKey('k.1.x', bodyFingerprint({})), 'k.1')).toBe(false)
  })
})

describe('an Idempotency-Key reused with another body', () => {
  let restate: FakeRestate
  let table: FakeInvocations
  let app: FastifyInstance
  const build = (maxConcurrentRuns = 1) => testGateway({ restateIngressUrl: restate.url, restateAdminUrl: `${restate.url}/admin`, limits: { maxConcurrentRuns } })
  beforeEach(async () => {
    restate = await startFakeRestate()
    table = fakeInvocations(restate)
    app = await build()
  })
  afterEach(async () => {
    await app.close()
    await restate.close()
  })
  const post = (route: 'prompts' | 'messages', sessionId: string, payload: object, key = 'key-1') =>
    app.inject({ method: 'POST', url: `/v1/sessions/${sessionId}/${route}`, payload, headers: { ...bearer(KEY_A), 'idempotency-key': key } })

  it('gets 422 idempotency_key_reused on prompts; the same body (keys in any order) answers the first run, even at the cap', async () => {
    const first = await post('prompts', 's1', { prompt: 'p', maxTurns: 2 })
    expect(first.statusCode).toBe(202)
    const reused = await post('prompts', 's1', { prompt: 'another' })
    expect(reused.statusCode).toBe(422)
    expect(reused.json()).toEqual({ error: { code: 'idempotency_key_reused', message: expect.stringContaining('another body') } })
    const repeated = await post('prompts', 's1', { maxTurns: 2, prompt: 'p' })
    expect(repeated.statusCode).toBe(202)
    expect(repeated.json().invocationId).toBe(first.json().invocationId)
    expect(table.sentKeys).toEqual([restateIdempotencyKey('key-1', bodyFingerprint({ prompt: 'p', maxTurns: 2 })), restateIdempotencyKey('key-1', bodyFingerprint({ prompt: 'p', maxTurns: 2 }))])
  })

  it('gets 422 on messages too, and keys are per session', async () => {
    await app.close()
    app = await build(2)
    expect((await post('messages', 's1', { text: 'a' })).statusCode).toBe(202)
    expect((await post('messages', 's1', { text: 'b' })).json()).toMatchObject({ error: { code: 'idempotency_key_reused' } })
    expect((await post('messages', 's1', { text: 'a' })).statusCode).toBe(202)
    expect((await post('messages', 's2', { text: 'b' })).statusCode).toBe(202)
  })

  it('is remembered by Restate, not the gateway: a new gateway (a restart, another replica) answers 422 too', async () => {
    expect((await post('prompts', 's1', { prompt: 'p' })).statusCode).toBe(202)
    await app.close()
    app = await build()
    expect((await post('prompts', 's1', { prompt: 'q' })).statusCode).toBe(422)
  })

  it('gets 422 for two different bodies sent at once with one key: the first decided stands', async () => {
    const statuses = (await Promise.all([post('prompts', 's1', { prompt: 'p' }), post('prompts', 's1', { prompt: 'q' })])).map((response) => response.statusCode)
    expect(statuses.sort()).toEqual([202, 422])
    expect(table.sentKeys).toHaveLength(1)
  })

  it('answers a key Restate holds as sent before bodies were folded in as that request', async () => {
    table.rows.push({ id: 'inv_old', service: 'session', handler: 'run', sessionKey: sessionKey(tenantOf(KEY_A), 's1'), status: 'completed', idempotencyKey: 'key-1' })
    const repeated = await post('prompts', 's1', { prompt: 'anything' })
    expect(repeated.statusCode).toBe(202)
    expect(repeated.json().invocationId).toBe('inv_old')
    expect(table.sentKeys).toEqual(['key-1'])
  })
})

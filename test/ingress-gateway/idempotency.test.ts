import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bodyFingerprint } from '../../ingress-gateway/idempotency'
import { tenantOf } from '../../ingress-gateway/tenancy'
import { startFakeRestate, type FakeRestate } from './helpers/fake-restate'
import { bearer, KEY_A, testGateway } from './helpers/gateway'

describe('body fingerprints', () => {
  it('ignores object key order and tells any other body apart', () => {
    expect(bodyFingerprint({ prompt: 'p', maxTurns: 3, policy: { deny: ['shell'], approve: [] } })).toBe(bodyFingerprint({ policy: { approve: [], deny: ['shell'] }, maxTurns: 3, prompt: 'p' }))
    expect(bodyFingerprint({ prompt: 'p' })).not.toBe(bodyFingerprint({ prompt: 'p ' }))
    expect(bodyFingerprint({ prompt: 'p', maxTurns: 3 })).not.toBe(bodyFingerprint({ prompt: 'p', maxTurns: '3' }))
  })
})

describe('an Idempotency-Key reused with another body', () => {
  let restate: FakeRestate
  let app: FastifyInstance
  const admission = `/admission/${tenantOf(KEY_A)}`
  beforeAll(async () => {
    restate = await startFakeRestate()
    app = await testGateway({ restateIngressUrl: restate.url, restateAdminUrl: `${restate.url}/admin` })
  })
  afterAll(async () => {
    await app.close()
    await restate.close()
  })

  it('gets 422 idempotency_key_reused when the admission remembers the key with another fingerprint, on prompts and messages', async () => {
    restate.on(`POST ${admission}/admit`, { status: 200, body: { outcome: 'idempotency_key_reused' } })
    restate.on(`POST ${admission}/steer`, { status: 200, body: { outcome: 'idempotency_key_reused' } })
    for (const [route, payload] of [['prompts', { prompt: 'another' }], ['messages', { text: 'another' }]] as const) {
      const response = await app.inject({ method: 'POST', url: `/v1/sessions/s1/${route}`, payload, headers: { ...bearer(KEY_A), 'idempotency-key': 'key-1' } })
      expect(response.statusCode, route).toBe(422)
      expect(response.json()).toEqual({ error: { code: 'idempotency_key_reused', message: expect.stringContaining('another body') } })
    }
    expect(restate.requests.map(request => (request.body as { idempotency?: unknown }).idempotency)).toEqual([
      { key: 'key-1', fingerprint: bodyFingerprint({ prompt: 'another' }) },
      { key: 'key-1', fingerprint: bodyFingerprint({ text: 'another' }) },
    ])
  })
})

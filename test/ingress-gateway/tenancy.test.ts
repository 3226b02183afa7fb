import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { redactToken } from '../../ingress-gateway/app'
import { answerUrl, signAnswerToken, verifyAnswerToken } from '../../ingress-gateway/answer-token'
import { createKeyRing, sessionKey, tenantOf } from '../../ingress-gateway/tenancy'

describe('tenancy', () => {
  it('names a tenant by the first 16 hex chars of sha256(key)', () => {
    expect(tenantOf('secret')).toBe(createHash('sha256').update('secret').digest('hex').slice(0, 16))
    expect(tenantOf('secret')).toMatch(/^[0-9a-f]{16}$/)
  })

  it('builds object keys as tenant~sessionId', () => {
    expect(sessionKey('abc', 's-1')).toBe('abc~s-1')
  })

  it('finds the tenant of a configured key only', () => {
    const ring = createKeyRing(['k1', 'k2'])
    expect(ring.tenantFor('k2')).toBe(tenantOf('k2'))
    expect(ring.tenantFor('k3')).toBeUndefined()
    expect(ring.tenantFor('')).toBeUndefined()
    expect(createKeyRing([]).tenantFor('k1')).toBeUndefined()
  })
})

describe('answer tokens', () => {
  it('signs per id and verifies in constant time', () => {
    const token = signAnswerToken('secret-0123456789', 'sign_1abc')
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(verifyAnswerToken('secret-0123456789', 'sign_1abc', token)).toBe(true)
    expect(verifyAnswerToken('secret-0123456789', 'sign_1abd', token)).toBe(false)
    expect(verifyAnswerToken('other-secret-0123', 'sign_1abc', token)).toBe(false)
    expect(verifyAnswerToken('secret-0123456789', 'sign_1abc', token.slice(1))).toBe(false)
  })

  it('builds answer links with the encoded id and its token', () => {
    expect(answerUrl('https://gw.example', 's', 'a/b')).toBe(`https://gw.example/v1/awakeables/a%2Fb/resolve?token=${signAnswerToken('s', 'a/b')}`)
  })
})

describe('request logs', () => {
  it('redact answer tokens from URLs', () => {
    expect(redactToken('/v1/awakeables/a/resolve?token=abc-_1&x=1')).toBe('/v1/awakeables/a/resolve?token=REDACTED&x=1')
    expect(redactToken('/v1/x?a=1&token=abc')).toBe('/v1/x?a=1&token=REDACTED')
    expect(redactToken('/v1/sessions/s1')).toBe('/v1/sessions/s1')
  })

  it('redact a token whose parameter name is percent-encoded (the query parser decodes it, so it authorizes)', () => {
    expect(redactToken('/v1/awakeables/a/resolve?%74oken=abc')).toBe('/v1/awakeables/a/resolve?%74oken=REDACTED')
    expect(redactToken('/v1/awakeables/a/resolve?x=%E0&%74%6F%6B%65%6E=abc')).toBe('/v1/awakeables/a/resolve?x=%E0&%74%6F%6B%65%6E=REDACTED')
    expect(redactToken('/v1/x?%E0=1&tokens=2')).toBe('/v1/x?%E0=1&tokens=2')
  })
})

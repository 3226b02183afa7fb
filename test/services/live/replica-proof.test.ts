import { describe, expect, it } from 'vitest'
import { hasValidProof, isHubUrl, replicaProof } from '../../../services/live/replica-proof'

const token = 'live-token-0123456789'

describe('the proof of a live hub registration', () => {
  it('holds for the URL and instance it was made for, with the token it was made with', () => {
    const claim = { url: 'http://10.0.0.5:9180', instance: 'abc', proof: replicaProof(token, 'http://10.0.0.5:9180', 'abc') }
    expect(hasValidProof(token, claim)).toBe(true)
    expect(hasValidProof('another-token-0123456789', claim)).toBe(false)
    expect(hasValidProof(token, { ...claim, url: 'http://attacker.example:9180' })).toBe(false)
    expect(hasValidProof(token, { ...claim, instance: 'other' })).toBe(false)
    expect(hasValidProof(token, { ...claim, proof: `${claim.proof}x` })).toBe(false)
    expect(hasValidProof(token, { url: claim.url, instance: claim.instance })).toBe(false)
    expect(hasValidProof(token, { ...claim, url: 42 })).toBe(false)
  })

  it('takes only absolute http(s) URLs without credentials, query or fragment as hub URLs', () => {
    expect(isHubUrl('http://127.0.0.1:9180')).toBe(true)
    expect(isHubUrl('https://services-1.internal')).toBe(true)
    for (const url of ['file:///etc/passwd', 'ftp://hub', 'http://user:pass@hub', 'http://hub/?x=1', 'http://hub/#x', '/v1/live', 'not a url', `http://${'a'.repeat(600)}`, 7]) {
      expect(isHubUrl(url)).toBe(false)
    }
  })
})

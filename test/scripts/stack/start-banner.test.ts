import { describe, expect, it } from 'vitest'
import { apiKeyBanner, startBanner } from '../../../scripts/stack/start-banner'

const facts = { gatewayUrl: 'http://127.0.0.1:3000', keyFile: undefined, model: 'the demo model' }

describe('the start-up banner', () => {
  it('prints the key when one is configured (single-user development), with the file that keeps a generated one', () => {
    const banner = startBanner({ ...facts, gatewayApiKeys: 'zk_only-key-0123456789', keyFile: '.restate-data/gateway-api-key' })
    expect(banner).toContain('API key (kept in .restate-data/gateway-api-key): zk_only-key-0123456789')
    expect(banner).toContain('-H "Authorization: Bearer zk_only-key-0123456789"')
  })

  it('prints no key when several are configured, only where they are', () => {
    const keys = ['tenant-a-key-0123456789', 'tenant-b-key-0123456789', 'tenant-c-key-0123456789']
    const banner = startBanner({ ...facts, gatewayApiKeys: ` ${keys.join(' , ')} ` })
    for (const key of keys) expect(banner).not.toContain(key)
    expect(banner).toContain('API keys: 3 in GATEWAY_API_KEYS')
    expect(banner).toContain('-H "Authorization: Bearer <one of GATEWAY_API_KEYS>"')
  })

  it('says open mode needs no key, and sends no Authorization header in its examples', () => {
    expect(apiKeyBanner('', undefined)).toEqual({ line: 'Open dev mode: no API key required.', auth: '' })
    expect(startBanner({ ...facts, gatewayApiKeys: '' })).not.toContain('Authorization')
  })

  it('counts a trailing comma as no key: one key is still printed', () => {
    expect(apiKeyBanner('solo-key-0123456789,', undefined).line).toBe('API key: solo-key-0123456789')
  })
})

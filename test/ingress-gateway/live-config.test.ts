import { describe, expect, it } from 'vitest'
import { GatewayConfigError, loadGatewayConfig } from '../../ingress-gateway/config'

const keys = { GATEWAY_API_KEYS: 'key-one-0123456789' }

describe('gateway config of the live hubs', () => {
  it('reads one hub URL per services replica and the shared token', () => {
    const config = loadGatewayConfig({ ...keys, ZIDANE_LIVE_URLS: 'http://127.0.0.1:9180/, http://10.0.0.2:9180', ZIDANE_LIVE_TOKEN: 'shared' })
    expect(config.live).toEqual({ urls: ['http://127.0.0.1:9180', 'http://10.0.0.2:9180'], token: 'shared' })
  })

  it('leaves live deltas off without hub URLs', () => {
    expect(loadGatewayConfig(keys).live).toBeUndefined()
  })

  it('refuses hub URLs without the token, and a URL that is not http(s)', () => {
    expect(() => loadGatewayConfig({ ...keys, ZIDANE_LIVE_URLS: 'http://127.0.0.1:9180' })).toThrow(GatewayConfigError)
    expect(() => loadGatewayConfig({ ...keys, ZIDANE_LIVE_URLS: 'ftp://hub', ZIDANE_LIVE_TOKEN: 'shared' })).toThrow(/ZIDANE_LIVE_URLS/)
  })
})

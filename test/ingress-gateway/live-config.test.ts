import { describe, expect, it } from 'vitest'
import { GatewayConfigError, loadGatewayConfig } from '../../ingress-gateway/config'

const keys = { GATEWAY_API_KEYS: 'key-one-0123456789' }

describe('gateway config of the live hubs', () => {
  it('reads one hub URL per services replica and the shared token', () => {
    const config = loadGatewayConfig({ ...keys, ZIDANE_LIVE_URLS: 'http://127.0.0.1:9180/, http://10.0.0.2:9180', ZIDANE_LIVE_TOKEN: 'shared' })
    expect(config.live).toEqual({ urls: ['http://127.0.0.1:9180', 'http://10.0.0.2:9180'], token: 'shared' })
  })

  it('without hub URLs, reads the hubs the services registered in Restate, through its ingress', () => {
    const config = loadGatewayConfig({ ...keys, RESTATE_INGRESS_URL: 'http://restate:8080/', ZIDANE_LIVE_TOKEN: 'shared' })
    expect(config.live).toEqual({ token: 'shared', registryUrl: 'http://restate:8080', refreshMs: 60_000 })
    expect(loadGatewayConfig({ ...keys, ZIDANE_LIVE_TOKEN: 'shared', ZIDANE_LIVE_REFRESH_MS: '500' }).live?.refreshMs).toBe(500)
    expect(() => loadGatewayConfig({ ...keys, ZIDANE_LIVE_TOKEN: 'shared', ZIDANE_LIVE_REFRESH_MS: '0' })).toThrow(/ZIDANE_LIVE_REFRESH_MS/)
  })

  it('leaves live deltas off without the token', () => {
    expect(loadGatewayConfig(keys).live).toBeUndefined()
  })

  it('refuses hub URLs without the token, and a URL that is not http(s)', () => {
    expect(() => loadGatewayConfig({ ...keys, ZIDANE_LIVE_URLS: 'http://127.0.0.1:9180' })).toThrow(GatewayConfigError)
    expect(() => loadGatewayConfig({ ...keys, ZIDANE_LIVE_URLS: 'ftp://hub', ZIDANE_LIVE_TOKEN: 'shared' })).toThrow(/ZIDANE_LIVE_URLS/)
  })
})

import { describe, expect, it } from 'vitest'
import { buildGateway } from '../../ingress-gateway/app'
import { defaultAnswerSecret, GatewayConfigError, loadGatewayConfig } from '../../ingress-gateway/config'
import { testConfig } from './helpers/gateway'

describe('loadGatewayConfig', () => {
  it('refuses to load without API keys and without open mode', () => {
    expect(() => loadGatewayConfig({})).toThrow(GatewayConfigError)
    expect(() => loadGatewayConfig({ GATEWAY_API_KEYS: ' , ' })).toThrow(/GATEWAY_API_KEYS.*GATEWAY_OPEN=1/)
    expect(() => loadGatewayConfig({ GATEWAY_OPEN: 'true' })).toThrow(GatewayConfigError)
  })

  it('applies the documented defaults', () => {
    const config = loadGatewayConfig({ GATEWAY_API_KEYS: 'k1, k2 ,' })
    expect(config).toMatchObject({
      apiKeys: ['k1', 'k2'],
      open: false,
      restateIngressUrl: 'http://127.0.0.1:8080',
      restateAdminUrl: 'http://127.0.0.1:9070',
      port: 3000,
      host: '127.0.0.1',
      publicUrl: 'http://127.0.0.1:3000',
      bodyLimitBytes: 1024 * 1024,
    })
  })

  it('reads every variable', () => {
    const config = loadGatewayConfig({
      GATEWAY_OPEN: '1',
      RESTATE_INGRESS_URL: 'http://restate:8080/',
      RESTATE_ADMIN_URL: 'https://restate:9070',
      GATEWAY_PORT: '8000',
      GATEWAY_HOST: '0.0.0.0',
      GATEWAY_ANSWER_SECRET: 'a-long-enough-secret',
      GATEWAY_BODY_LIMIT_BYTES: '2048',
    })
    expect(config).toMatchObject({
      apiKeys: [],
      open: true,
      restateIngressUrl: 'http://restate:8080',
      restateAdminUrl: 'https://restate:9070',
      port: 8000,
      host: '0.0.0.0',
      publicUrl: 'http://127.0.0.1:8000',
      answerSecret: 'a-long-enough-secret',
      bodyLimitBytes: 2048,
    })
    expect(loadGatewayConfig({ GATEWAY_OPEN: '1', GATEWAY_PUBLIC_URL: 'https://agents.example.com/' }).publicUrl).toBe('https://agents.example.com')
  })

  it('lets keys win over GATEWAY_OPEN', () => {
    expect(loadGatewayConfig({ GATEWAY_OPEN: '1', GATEWAY_API_KEYS: 'k' }).open).toBe(false)
  })

  it('rejects malformed values with the variable name', () => {
    const base = { GATEWAY_API_KEYS: 'k' }
    expect(() => loadGatewayConfig({ ...base, GATEWAY_PORT: 'http' })).toThrow(/GATEWAY_PORT/)
    expect(() => loadGatewayConfig({ ...base, GATEWAY_PORT: '70000' })).toThrow(/GATEWAY_PORT/)
    expect(() => loadGatewayConfig({ ...base, GATEWAY_BODY_LIMIT_BYTES: '0' })).toThrow(/GATEWAY_BODY_LIMIT_BYTES/)
    expect(() => loadGatewayConfig({ ...base, RESTATE_INGRESS_URL: 'restate:8080' })).toThrow(/RESTATE_INGRESS_URL/)
    expect(() => loadGatewayConfig({ ...base, RESTATE_ADMIN_URL: 'ftp://restate' })).toThrow(/RESTATE_ADMIN_URL/)
    expect(() => loadGatewayConfig({ ...base, GATEWAY_ANSWER_SECRET: 'short' })).toThrow(/GATEWAY_ANSWER_SECRET/)
  })

  it('derives the answer secret from the keys (order-independent), randomly without keys', () => {
    expect(loadGatewayConfig({ GATEWAY_API_KEYS: 'a,b' }).answerSecret).toBe(loadGatewayConfig({ GATEWAY_API_KEYS: 'b,a' }).answerSecret)
    expect(defaultAnswerSecret(['a'])).not.toBe(defaultAnswerSecret(['b']))
    expect(defaultAnswerSecret(['a-long-api-key-value'])).not.toContain('a-long-api-key-value')
    expect(defaultAnswerSecret([])).not.toBe(defaultAnswerSecret([]))
  })
})

describe('buildGateway', () => {
  it('refuses to build without keys unless open', async () => {
    await expect(buildGateway(testConfig({ apiKeys: [], open: false }))).rejects.toThrow(GatewayConfigError)
    const app = await buildGateway(testConfig({ apiKeys: [], open: true }))
    await app.close()
  })
})

import { describe, expect, it } from 'vitest'
import { buildGateway } from '../../ingress-gateway/app'
import { defaultAnswerSecret, GatewayConfigError, loadGatewayConfig } from '../../ingress-gateway/config'
import { testConfig } from './helpers/gateway'

const K1 = 'key-one-0123456789'
const K2 = 'key-two-0123456789'

describe('loadGatewayConfig', () => {
  it('refuses to load without API keys and without open mode', () => {
    expect(() => loadGatewayConfig({})).toThrow(GatewayConfigError)
    expect(() => loadGatewayConfig({ GATEWAY_API_KEYS: ' , ' })).toThrow(/GATEWAY_API_KEYS.*GATEWAY_OPEN=1/)
    expect(() => loadGatewayConfig({ GATEWAY_OPEN: 'true' })).toThrow(GatewayConfigError)
  })

  it('applies the documented defaults', () => {
    const config = loadGatewayConfig({ GATEWAY_API_KEYS: `${K1}, ${K2} ,` })
    expect(config).toMatchObject({
      apiKeys: [K1, K2],
      open: false,
      restateIngressUrl: 'http://127.0.0.1:8080',
      restateAdminUrl: 'http://127.0.0.1:9070',
      port: 3000,
      host: '127.0.0.1',
      publicUrl: 'http://127.0.0.1:3000',
      bodyLimitBytes: 1024 * 1024,
      requestTimeoutMs: 30_000,
      limits: { maxConcurrentRuns: 20, maxEventStreams: 10, requestsPerSecond: 20, requestBurst: 100 },
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
      GATEWAY_REQUEST_TIMEOUT_MS: '500',
      GATEWAY_MAX_CONCURRENT_RUNS: '3',
      GATEWAY_MAX_EVENT_STREAMS: '4',
      GATEWAY_RATE_PER_SECOND: '5',
      GATEWAY_RATE_BURST: '6',
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
      requestTimeoutMs: 500,
      limits: { maxConcurrentRuns: 3, maxEventStreams: 4, requestsPerSecond: 5, requestBurst: 6 },
    })
    expect(loadGatewayConfig({ GATEWAY_OPEN: '1', GATEWAY_PUBLIC_URL: 'https://agents.example.com/' }).publicUrl).toBe('https://agents.example.com')
  })

  it('lets keys win over GATEWAY_OPEN', () => {
    expect(loadGatewayConfig({ GATEWAY_OPEN: '1', GATEWAY_API_KEYS: K1 }).open).toBe(false)
  })

  it('rejects malformed values with the variable name', () => {
    const base = { GATEWAY_API_KEYS: K1 }
    expect(() => loadGatewayConfig({ ...base, GATEWAY_PORT: 'http' })).toThrow(/GATEWAY_PORT/)
    expect(() => loadGatewayConfig({ ...base, GATEWAY_PORT: '70000' })).toThrow(/GATEWAY_PORT/)
    expect(() => loadGatewayConfig({ ...base, GATEWAY_BODY_LIMIT_BYTES: '0' })).toThrow(/GATEWAY_BODY_LIMIT_BYTES/)
    expect(() => loadGatewayConfig({ ...base, RESTATE_INGRESS_URL: 'restate:8080' })).toThrow(/RESTATE_INGRESS_URL/)
    expect(() => loadGatewayConfig({ ...base, RESTATE_ADMIN_URL: 'ftp://restate' })).toThrow(/RESTATE_ADMIN_URL/)
    expect(() => loadGatewayConfig({ ...base, GATEWAY_ANSWER_SECRET: 'short' })).toThrow(/GATEWAY_ANSWER_SECRET/)
    expect(() => loadGatewayConfig({ ...base, GATEWAY_REQUEST_TIMEOUT_MS: '0' })).toThrow(/GATEWAY_REQUEST_TIMEOUT_MS/)
    expect(() => loadGatewayConfig({ ...base, GATEWAY_RATE_BURST: 'x' })).toThrow(/GATEWAY_RATE_BURST/)
    // A parked watch sends no headers until it returns, and Node's fetch gives up on headers after 300 s.
    expect(() => loadGatewayConfig({ ...base, GATEWAY_EVENT_WATCH_MS: '300000' })).toThrow(/GATEWAY_EVENT_WATCH_MS must be an integer from 1000 to 240000/)
    expect(loadGatewayConfig({ ...base }).eventWatchMs).toBe(240_000)
  })

  it('refuses API keys shorter than 16 characters, naming the key by position and not printing it', () => {
    expect(() => loadGatewayConfig({ GATEWAY_API_KEYS: `${K1},short-key` })).toThrow(/API key 2 .* at least 16/)
    expect(() => loadGatewayConfig({ GATEWAY_API_KEYS: `${K1},short-key` })).not.toThrow(/short-key/)
    expect(loadGatewayConfig({ GATEWAY_API_KEYS: '0123456789abcdef' }).apiKeys).toEqual(['0123456789abcdef'])
  })

  it('derives the answer secret from the keys (order-independent), randomly without keys', () => {
    expect(loadGatewayConfig({ GATEWAY_API_KEYS: `${K1},${K2}` }).answerSecret).toBe(loadGatewayConfig({ GATEWAY_API_KEYS: `${K2},${K1}` }).answerSecret)
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

  it('refuses to build with an API key shorter than 16 characters', async () => {
    await expect(buildGateway(testConfig({ apiKeys: ['short-key'] }))).rejects.toThrow(/at least 16/)
  })
})

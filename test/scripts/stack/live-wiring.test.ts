import { mkdtemp, rm, stat } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { servicesEnvironment } from '../../../scripts/stack/process-env'
import { loadStackConfig } from '../../../scripts/stack/stack-config'
import { loadLiveConfig } from '../../../services/live/live-config'

describe('live hub wiring of the local stack', () => {
  let dataDir = ''
  beforeEach(async () => { dataDir = await mkdtemp(join(tmpdir(), 'zidane-live-')) })
  afterEach(async () => { await rm(dataDir, { recursive: true, force: true }) })

  it('keeps one private live token in the data folder unless ZIDANE_LIVE_TOKEN is set', async () => {
    const first = await loadStackConfig({ ZIDANE_DATA_DIR: dataDir, GATEWAY_OPEN: '1' })
    const second = await loadStackConfig({ ZIDANE_DATA_DIR: dataDir, GATEWAY_OPEN: '1' })
    expect(first.liveToken.length).toBeGreaterThanOrEqual(32)
    expect(second.liveToken).toBe(first.liveToken)
    expect((await stat(join(dataDir, 'live-token'))).mode & 0o777).toBe(0o600)
    expect((await loadStackConfig({ ZIDANE_DATA_DIR: dataDir, GATEWAY_OPEN: '1', ZIDANE_LIVE_TOKEN: 'set-by-operator' })).liveToken).toBe('set-by-operator')
  })

  it('puts the hub on the services port + 100 unless ZIDANE_LIVE_PORT says otherwise, in the stack and in the services alike', async () => {
    expect((await loadStackConfig({ ZIDANE_DATA_DIR: dataDir, GATEWAY_OPEN: '1', SERVICES_PORT: '9500' })).livePort).toBe(9600)
    expect(loadLiveConfig({ SERVICES_PORT: '9500' }).port).toBe(9600)
    expect(loadLiveConfig({ SERVICES_PORT: '9500', ZIDANE_LIVE_PORT: '7001' })).toEqual({ port: 7001, host: '127.0.0.1', token: undefined, advertisedUrl: 'http://127.0.0.1:7001', leaseMs: 60_000 })
  })

  it('advertises the hub at its bind address, the host name when it binds every interface, or ZIDANE_LIVE_ADVERTISED_URL', () => {
    expect(loadLiveConfig({ ZIDANE_LIVE_HOST: '0.0.0.0', ZIDANE_LIVE_PORT: '7001' }).advertisedUrl).toBe(`http://${hostname()}:7001`)
    expect(loadLiveConfig({ ZIDANE_LIVE_HOST: '::1', ZIDANE_LIVE_PORT: '7001' }).advertisedUrl).toBe('http://[::1]:7001')
    expect(loadLiveConfig({ ZIDANE_LIVE_ADVERTISED_URL: 'http://services-2.internal:9180/' }).advertisedUrl).toBe('http://services-2.internal:9180')
  })

  it('keeps the lease between 1 s and 10 min', () => {
    expect(loadLiveConfig({ ZIDANE_LIVE_LEASE_MS: '3000' }).leaseMs).toBe(3_000)
    expect(loadLiveConfig({ ZIDANE_LIVE_LEASE_MS: '10' }).leaseMs).toBe(1_000)
    expect(loadLiveConfig({ ZIDANE_LIVE_LEASE_MS: 'soon' }).leaseMs).toBe(60_000)
  })

  it('hands the live port and token to the services process', () => {
    expect(servicesEnvironment({ ZIDANE_LIVE_PORT: '7001', ZIDANE_LIVE_TOKEN: 't', GATEWAY_API_KEYS: 'k' })).toEqual({ ZIDANE_LIVE_PORT: '7001', ZIDANE_LIVE_TOKEN: 't' })
  })
})

import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { clusterPorts, loadClusterConfig, withFreePorts } from '../../scripts/cluster/cluster-config'

describe('live hubs of the loopback cluster', () => {
  let dataDir = ''
  beforeEach(async () => { dataDir = await mkdtemp(join(tmpdir(), 'zidane-cluster-live-')) })
  afterEach(async () => { await rm(dataDir, { recursive: true, force: true }) })

  it('gives services replica j the live hub port of a single-node stack + j, and one shared token', async () => {
    const config = await loadClusterConfig({ ZIDANE_DATA_DIR: dataDir, GATEWAY_OPEN: '1', SERVICES_PORT: '9500' })
    expect(config.livePorts).toEqual([9601, 9602])
    expect(config.liveToken.length).toBeGreaterThanOrEqual(32)
    expect(clusterPorts(config).filter(([, variable]) => variable === 'ZIDANE_LIVE_PORT').map(([port]) => port)).toEqual([9601, 9602])
  })

  it('picks live hub ports that no other process of a test cluster gets', async () => {
    const config = await withFreePorts(await loadClusterConfig({ ZIDANE_DATA_DIR: dataDir, GATEWAY_OPEN: '1' }))
    const ports = clusterPorts(config).map(([port]) => port)
    expect(new Set(ports).size).toBe(ports.length)
    expect(config.livePorts).toHaveLength(2)
  })
})

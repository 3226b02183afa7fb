import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { discoveredReplicas } from '../../../ingress-gateway/live-replicas'
import { replicaProof } from '../../../services/live/replica-proof'
import { LIVE_REPLICAS_KEY, liveReplicasInterface } from '../../../contract/live-replicas'
import type { LiveReplica } from '../../../contract/live-replicas'
import { liveReplicasObject } from '../../../services/live/replica-registry-object'
import { startReplicaRegistration } from '../../../services/live/replica-registration'
import { printLogsOnFailure, startRestateHarness, waitFor } from '../../helpers/restate/restate-harness'
import type { RestateHarness } from '../../helpers/restate/restate-harness'

const token = 'live-token-0123456789'

describe('the live-replica registry on a real Restate server', { timeout: 60_000 }, () => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  printLogsOnFailure(() => harness)
  beforeAll(async () => { harness = await startRestateHarness({ services: [liveReplicasObject({ token })] }) }, 60_000)
  afterAll(async () => { await harness?.stop() })

  const registry = () => h().ingress.client(liveReplicasInterface, LIVE_REPLICAS_KEY)
  const listed = async (): Promise<string[]> => (await registry().list()).map((replica: LiveReplica) => replica.url).sort()
  const claim = (url: string, instance: string, leaseMs: number) => ({ url, instance, proof: replicaProof(token, url, instance), leaseMs })

  it('lists a replica while it refreshes its lease, and forgets it once it deregisters', async () => {
    const lines: string[] = []
    const registration = startReplicaRegistration({ ingressUrl: h().ingressUrl, url: 'http://127.0.0.1:19181', token, leaseMs: 1_500, log: line => lines.push(line) })
    await waitFor(async () => (await listed()).includes('http://127.0.0.1:19181'), 10_000, 'the registration')
    await new Promise(resolve => setTimeout(resolve, 2_500)) // past the lease: still listed, refreshed every 500 ms
    expect(await listed()).toContain('http://127.0.0.1:19181')
    expect(lines).toEqual(['zidane services: live hub registered as http://127.0.0.1:19181 (lease 1500 ms)'])
    await registration.stop()
    await waitFor(async () => !(await listed()).includes('http://127.0.0.1:19181'), 5_000, 'the deregistration')
  })

  it('drops a replica that stops refreshing once its lease is over', async () => {
    await registry().register(claim('http://127.0.0.1:19182', 'killed', 1_000))
    expect(await listed()).toContain('http://127.0.0.1:19182')
    await waitFor(async () => !(await listed()).includes('http://127.0.0.1:19182'), 5_000, 'the lease to end')
  })

  it('leaves a URL registered by a later process alone when an earlier one deregisters it', async () => {
    await registry().register(claim('http://127.0.0.1:19183', 'earlier', 60_000))
    await registry().register(claim('http://127.0.0.1:19183', 'later', 60_000))
    await registry().deregister(claim('http://127.0.0.1:19183', 'earlier', 0))
    expect((await registry().list()).find(replica => replica.url === 'http://127.0.0.1:19183')?.instance).toBe('later')
    await registry().deregister(claim('http://127.0.0.1:19183', 'later', 0))
    expect(await listed()).not.toContain('http://127.0.0.1:19183')
  })

  it('refuses a claim without the live token\'s proof, or of a URL that is not a hub\'s, and keeps nothing of it', async () => {
    const forged = { url: 'http://attacker.example:80', instance: 'x', proof: replicaProof('not-the-token-0123456789', 'http://attacker.example:80', 'x'), leaseMs: 60_000 }
    await expect(registry().register(forged)).rejects.toMatchObject({ status: 403 })
    await expect(registry().register(claim('file:///etc/passwd', 'x', 60_000))).rejects.toMatchObject({ status: 400 })
    await expect(registry().register(claim('http://127.0.0.1:19184', 'x', 10))).rejects.toMatchObject({ status: 400 })
    expect((await h().call('live_replicas/hubs/register', null)).status).toBe(400)
    expect(await listed()).toEqual([])
  })

  it('is what a gateway reads through the ingress with the typed client', async () => {
    await registry().register(claim('http://127.0.0.1:19185', 'gw', 60_000))
    const directory = discoveredReplicas({ ingressUrl: h().ingressUrl, token })
    const seen: Array<readonly string[]> = []
    const unwatch = directory.watch(urls => seen.push(urls))
    await waitFor(() => seen.length > 0, 5_000, 'the first read')
    unwatch()
    expect(directory.urls()).toEqual(['http://127.0.0.1:19185'])
  })
})

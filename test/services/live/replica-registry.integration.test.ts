import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { discoveredReplicas } from '../../../ingress-gateway/live-replicas'
import { replicaProof } from '../../../services/live/replica-proof'
import { LIVE_REPLICAS_KEY, liveReplicasInterface, liveReplicasWatchInterface, registryVersion } from '../../../contract/live-replicas'
import type { LiveReplica } from '../../../contract/live-replicas'
import { liveReplicasObject, liveReplicasWatchService } from '../../../services/live/replica-registry-object'
import { startReplicaRegistration } from '../../../services/live/replica-registration'
import { printLogsOnFailure, startRestateHarness, waitFor } from '../../helpers/restate/restate-harness'
import type { RestateHarness } from '../../helpers/restate/restate-harness'

const token = 'live-token-0123456789'

describe('the live-replica registry on a real Restate server', { timeout: 60_000 }, () => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  printLogsOnFailure(() => harness)
  beforeAll(async () => { harness = await startRestateHarness({ services: [liveReplicasObject({ token }), liveReplicasWatchService] }) }, 60_000)
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

  it('is what a gateway follows through the ingress with the typed client: a parked watch, woken by each change', async () => {
    await registry().register(claim('http://127.0.0.1:19185', 'gw', 60_000))
    const waitsBefore = h().endpointRequests('live_replicas_watch', 'wait')
    const directory = discoveredReplicas({ ingressUrl: h().ingressUrl, token, refreshMs: 60_000 })
    const seen: Array<readonly string[]> = []
    const unwatch = directory.watch(urls => seen.push(urls))
    await waitFor(() => seen.length > 0, 5_000, 'the first read')
    expect(directory.urls()).toEqual(['http://127.0.0.1:19185'])
    // Nothing changes for a while: the gateway's watch stays parked (one wait, not a read per interval).
    await new Promise(resolve => setTimeout(resolve, 1_500))
    expect(h().endpointRequests('live_replicas_watch', 'wait') - waitsBefore).toBeLessThanOrEqual(2)
    // A replica that comes, then one that leaves, reaches the gateway at once, not at the next renewal 60 s later.
    await registry().register(claim('http://127.0.0.1:19186', 'gw', 60_000))
    await waitFor(() => seen.some(urls => urls.includes('http://127.0.0.1:19186')), 5_000, 'the new hub')
    await registry().deregister(claim('http://127.0.0.1:19185', 'gw', 0))
    await waitFor(() => directory.urls().join() === 'http://127.0.0.1:19186', 5_000, 'the hub that left')
    unwatch()
    await registry().deregister(claim('http://127.0.0.1:19186', 'gw', 0))
  })

  it('answers a watch at once when the list is not the caller\'s, null when nothing changed within its wait, and keeps no wait after it', async () => {
    const watch = h().ingress.client(liveReplicasWatchInterface)
    await registry().register(claim('http://127.0.0.1:19187', 'w', 60_000))
    const now = await registry().list()
    expect((await watch.wait({ known: 'something else', timeoutMs: 10_000 }))?.map(replica => replica.url)).toEqual(now.map(replica => replica.url))
    expect(await watch.wait({ known: registryVersion(now), timeoutMs: 300 })).toBeNull()
    // A lease refreshed is the same list: it wakes nobody.
    const waiting = watch.wait({ known: registryVersion(now), timeoutMs: 1_500 })
    await new Promise(resolve => setTimeout(resolve, 300))
    await registry().register(claim('http://127.0.0.1:19187', 'w', 60_000))
    expect(await waiting).toBeNull()
    const watchers = async (): Promise<number> => (await h().query<{ n: number }>("SELECT count(*) AS n FROM state WHERE service_name = 'live_replicas' AND key = 'watchers'"))[0]?.n ?? 0
    await waitFor(async () => Number(await watchers()) === 0, 5_000, 'the timed-out waits to be forgotten')
    await expect(watch.wait({ known: '', timeoutMs: 0 })).rejects.toMatchObject({ status: 400 })
    await registry().deregister(claim('http://127.0.0.1:19187', 'w', 0))
  })
})

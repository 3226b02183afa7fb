import { describe, expect, it } from 'vitest'
import { discoveredReplicas } from '../../ingress-gateway/live-replicas'
import { replicaProof } from '../../services/live/replica-proof'
import type { LiveReplica } from '../../contract/live-replicas'
import { registryVersion } from '../../contract/live-replicas'

const token = 'live-token-0123456789'

function registered(url: string, instance = 'i1', proofToken = token): LiveReplica {
  return { url, instance, proof: replicaProof(proofToken, url, instance), expiresAtMs: 0 }
}

async function until(check: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!check()) {
    if (performance.now() > deadline) throw new Error('timed out')
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}

describe('the live hubs a gateway discovers in Restate', () => {
  it('lists only the hubs registered with the live token\'s proof, at http(s) URLs', async () => {
    const refused: unknown[] = []
    const replicas = [registered('http://10.0.0.2:9180'), registered('http://10.0.0.1:9180/'), registered('http://attacker:9180', 'i1', 'not-the-token-0123456789'), { ...registered('http://10.0.0.3:9180'), url: 'http://10.0.0.9:9180' }, registered('file:///etc/passwd')]
    const directory = discoveredReplicas({ ingressUrl: 'http://unused', token, read: async () => replicas, onError: error => refused.push(error) })
    const seen: Array<readonly string[]> = []
    const unwatch = directory.watch(urls => seen.push(urls))
    await until(() => seen.length === 1)
    expect(directory.urls()).toEqual(['http://10.0.0.1:9180', 'http://10.0.0.2:9180'])
    expect(refused).toHaveLength(3)
    unwatch()
  })

  it('reads the registry only while a session is followed, keeps the last list when a read fails, and tells of changes', async () => {
    let reads = 0
    let answer: () => LiveReplica[] = () => [registered('http://10.0.0.1:9180')]
    const directory = discoveredReplicas({ ingressUrl: 'http://unused', token, minIntervalMs: 20, retryMs: 20, read: async () => { reads++; return answer() } })
    await new Promise(resolve => setTimeout(resolve, 60))
    expect(reads).toBe(0)
    const seen: Array<readonly string[]> = []
    const unwatch = directory.watch(urls => seen.push(urls))
    await until(() => reads >= 3)
    expect(seen).toEqual([['http://10.0.0.1:9180']])
    answer = () => { throw new Error('Restate is down') }
    const failedFrom = reads
    await until(() => reads >= failedFrom + 2)
    expect(directory.urls()).toEqual(['http://10.0.0.1:9180'])
    answer = () => [registered('http://10.0.0.1:9180'), registered('http://10.0.0.2:9180')]
    await until(() => seen.length === 2)
    expect(seen[1]).toEqual(['http://10.0.0.1:9180', 'http://10.0.0.2:9180'])
    unwatch()
    const stoppedAt = reads
    await new Promise(resolve => setTimeout(resolve, 80))
    expect(reads).toBeLessThanOrEqual(stoppedAt + 1)
  })

  it('asks the registry for a list other than the one it holds, and keeps its list when a wait ends with nothing new', async () => {
    const asked: string[] = []
    let answer: LiveReplica[] | null = [registered('http://10.0.0.1:9180')]
    const directory = discoveredReplicas({ ingressUrl: 'http://unused', token, minIntervalMs: 10, read: async (known) => { asked.push(known); const given = answer; answer = null; return given } })
    const seen: Array<readonly string[]> = []
    const unwatch = directory.watch(urls => seen.push(urls))
    await until(() => asked.length >= 3)
    unwatch()
    expect(asked[1]).toBe(registryVersion([registered('http://10.0.0.1:9180')]))
    expect(asked[0]).not.toBe(asked[1]) // the first read of a spell waits for nothing
    expect(seen).toEqual([['http://10.0.0.1:9180']])
    expect(directory.urls()).toEqual(['http://10.0.0.1:9180'])
  })
})

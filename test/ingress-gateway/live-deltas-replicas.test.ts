import type { Server, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createLiveDeltas } from '../../ingress-gateway/live-deltas'
import type { LiveEvent } from '../../ingress-gateway/live-deltas'
import type { LiveReplicaDirectory } from '../../ingress-gateway/live-replicas'
import type { LiveDelta } from '../../contract/live-delta'
import { createLiveHub } from '../../services/live/live-hub'
import type { LiveHub } from '../../services/live/live-hub'
import { createLiveServer } from '../../services/live/live-server'

const token = 'internal-token-0123456789'
const servers: Server[] = []

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise(resolve => server.close(resolve))
  }
})

/** A hub's live server that counts its open streams. */
async function countingHub(hub: LiveHub): Promise<{ url: string; open: () => number }> {
  const server = createLiveServer(hub, { token })
  servers.push(server)
  let open = 0
  server.on('request', (_request, response: ServerResponse) => {
    open++
    response.once('close', () => open--)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, open: () => open }
}

/** A directory a test changes by hand, counting its watchers. */
function handDirectory(initial: string[]): LiveReplicaDirectory & { set(urls: string[]): void; watchers(): number } {
  let urls: readonly string[] = initial
  const listeners = new Set<(urls: readonly string[]) => void>()
  return {
    urls: () => urls,
    watch(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    set(next) {
      urls = next
      for (const listener of listeners) listener(next)
    },
    watchers: () => listeners.size,
  }
}

function delta(runId: string, offset: number, text: string): LiveDelta {
  return { sessionKey: 't~s', runId, turn: 1, attempt: `${runId}-a1`, kind: 'text', offset, text }
}

async function until(check: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!check()) {
    if (performance.now() > deadline) throw new Error('timed out')
    await new Promise(resolve => setTimeout(resolve, 10))
  }
}

const texts = (events: LiveEvent[]): string => events.map(event => (event.type === 'model:delta' ? event.data.text : '|')).join('')

describe('a followed session as services replicas come and go', () => {
  it('follows a hub the directory adds (getting its attempt from the start) and leaves one it removes', async () => {
    const [first, second] = [createLiveHub(), createLiveHub()]
    const [a, b] = [await countingHub(first), await countingHub(second)]
    const directory = handDirectory([a.url])
    const live = createLiveDeltas({ token, replicas: directory })
    const events: LiveEvent[] = []
    const leave = live.subscribeLive('t~s', event => events.push(event))
    await until(() => a.open() === 1)
    first.publish(delta('r1', 0, 'one '))
    second.publish(delta('r2', 0, 'two '))
    await until(() => texts(events) === 'one ')
    directory.set([a.url, b.url])
    await until(() => texts(events) === 'one two ' && b.open() === 1)
    directory.set([b.url])
    await until(() => a.open() === 0)
    second.publish(delta('r2', 4, 'more'))
    await until(() => texts(events) === 'one two more')
    leave()
    await until(() => b.open() === 0)
    expect(directory.watchers()).toBe(0)
  })
})

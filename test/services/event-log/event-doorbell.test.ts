import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { createEventDoorbell } from '../../../services/event-log/event-doorbell'

interface Call { path: string; body: unknown; atMs: number }

/**
 * A stand-in for Restate's ingress: records each call and answers `sync` with `watched` and the `cursor` made for the
 * call's number (or fails with `status`).
 */
async function fakeIngress(answer: { watched: boolean; status?: number; cursor?: (call: number) => unknown }): Promise<{ url: string; calls: Call[]; close: () => Promise<void> }> {
  const calls: Call[] = []
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      calls.push({ path: request.url ?? '', body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown, atMs: performance.now() })
      response.writeHead(answer.status ?? 200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ count: calls.length, watched: answer.watched, cursor: answer.cursor?.(calls.length) }))
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, calls, close: () => new Promise(resolve => { server.closeAllConnections(); server.close(() => resolve()) }) }
}

const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms))

describe('event doorbell', () => {
  let close: (() => Promise<void>) | undefined
  afterEach(async () => { await close?.() })

  it('calls sync at the first ring, and once more for the rings within its window, with the latest counts', async () => {
    const ingress = await fakeIngress({ watched: true })
    close = ingress.close
    // A window far wider than any scheduling delay: the bounds below hold on a loaded machine (the arrival times
    // include a connection's set-up, which the window, counted from a call's start, does not).
    const doorbell = createEventDoorbell({ ingressUrl: ingress.url, windowMs: 1_000 })
    const startMs = performance.now()
    doorbell.ring('t1~a b', { turns: 1, runs: 1 })
    await sleep(5)
    doorbell.ring('t1~a b', { turns: 2, runs: 1 })
    doorbell.ring('t1~a b', { turns: 3, runs: 1 })
    await doorbell.idle()
    expect(ingress.calls.map(call => [call.path, call.body])).toEqual([
      ['/events/t1~a%20b/sync', { turns: 1, runs: 1 }],
      ['/events/t1~a%20b/sync', { turns: 3, runs: 1 }],
    ])
    expect((ingress.calls[0]?.atMs ?? Infinity) - startMs).toBeLessThan(500) // at once, not after the window
    expect((ingress.calls[1]?.atMs ?? 0) - (ingress.calls[0]?.atMs ?? 0)).toBeGreaterThanOrEqual(500)
    expect(doorbell.calls()).toBe(2)
  })

  it('rings a log no viewer follows at most once per its longer window', async () => {
    const ingress = await fakeIngress({ watched: false })
    close = ingress.close
    const doorbell = createEventDoorbell({ ingressUrl: ingress.url, windowMs: 10, unwatchedWindowMs: 300 })
    for (let turn = 1; turn <= 5; turn++) {
      doorbell.ring('t1~quiet', { turns: turn, runs: 1 })
      await sleep(20)
    }
    expect(ingress.calls).toHaveLength(1) // the first call learnt that nobody follows
    await doorbell.idle()
    expect(ingress.calls.map(call => call.body)).toEqual([{ turns: 1, runs: 1 }, { turns: 5, runs: 1 }])
    // Far past the 10 ms window; below 300 ms by what the first call's connection set-up may take under load.
    expect((ingress.calls[1]?.atMs ?? 0) - (ingress.calls[0]?.atMs ?? 0)).toBeGreaterThanOrEqual(200)
  })

  it('asks a log no viewer follows at most every 5 s by default whether one came', async () => {
    const ingress = await fakeIngress({ watched: false })
    close = ingress.close
    const doorbell = createEventDoorbell({ ingressUrl: ingress.url, windowMs: 10 })
    for (let turn = 1; turn <= 15; turn++) {
      doorbell.ring('t1~unfollowed', { turns: turn, runs: 1 })
      await sleep(100)
    }
    // 1.5 s of rings: the first asked, the rest wait for the 5 s window (a 1 s one asked again).
    expect(ingress.calls).toHaveLength(1)
    doorbell.covered('t1~unfollowed', { turns: 15, runs: 1 }) // the run's journaled sync at its end
    await doorbell.idle()
    expect(ingress.calls).toHaveLength(1)
  })

  it('rings at once a log whose session a viewer follows live here, whatever its last sync answered', async () => {
    const ingress = await fakeIngress({ watched: false })
    close = ingress.close
    let viewer = false
    const doorbell = createEventDoorbell({ ingressUrl: ingress.url, windowMs: 10, unwatchedWindowMs: 60_000, followed: logKey => viewer && logKey === 't1~seen' })
    doorbell.ring('t1~seen', { turns: 1, runs: 1 })
    await sleep(100)
    doorbell.ring('t1~seen', { turns: 2, runs: 1 }) // nobody followed: waits for the 60 s window
    await sleep(100)
    expect(ingress.calls).toHaveLength(1)
    viewer = true // a gateway's stream subscribed to the session's live deltas
    doorbell.ring('t1~seen', { turns: 3, runs: 1 })
    await sleep(300)
    expect(ingress.calls.map(call => call.body)).toEqual([{ turns: 1, runs: 1 }, { turns: 3, runs: 1 }])
    doorbell.ring('t1~seen', { turns: 4, runs: 1 })
    await doorbell.idle()
    expect(ingress.calls).toHaveLength(3)
  })

  it('holds a ring that may wait until a ring that may not, and calls once for both', async () => {
    const ingress = await fakeIngress({ watched: true })
    close = ingress.close
    const doorbell = createEventDoorbell({ ingressUrl: ingress.url, windowMs: 10 })
    const startMs = performance.now()
    doorbell.ring('t1~turn', { turns: 2, runs: 1 }, 1_000) // a tool call starts
    await sleep(30)
    expect(ingress.calls).toHaveLength(0)
    doorbell.ring('t1~turn', { turns: 3, runs: 1 }) // its result ends the turn
    await doorbell.idle()
    expect(ingress.calls.map(call => call.body)).toEqual([{ turns: 3, runs: 1 }])
    expect(performance.now() - startMs).toBeLessThan(500)
  })

  it('drops a waiting ring that a journaled sync covers, and keeps one that asks for more', async () => {
    const ingress = await fakeIngress({ watched: false })
    close = ingress.close
    const doorbell = createEventDoorbell({ ingressUrl: ingress.url, windowMs: 10, unwatchedWindowMs: 200 })
    doorbell.ring('t1~end', { turns: 1, runs: 1 })
    await sleep(30) // the first call learnt that nobody follows: the next ring waits for the longer window
    doorbell.ring('t1~end', { turns: 5, runs: 1 })
    doorbell.covered('t1~end', { turns: 5, runs: 1 }) // the run's last journaled sync brings those writes
    doorbell.ring('t1~more', { turns: 1, runs: 1 })
    await sleep(30)
    doorbell.ring('t1~more', { turns: 7, runs: 1 })
    doorbell.covered('t1~more', { turns: 6, runs: 1 }) // a write came after the journaled sync: its ring stays
    await doorbell.idle()
    expect(ingress.calls.map(call => [call.path, call.body])).toEqual([
      ['/events/t1~end/sync', { turns: 1, runs: 1 }],
      ['/events/t1~more/sync', { turns: 1, runs: 1 }],
      ['/events/t1~more/sync', { turns: 7, runs: 1 }],
    ])
  })

  it('passes on the cursor the last sync of the log returned, and only one shaped as a cursor', async () => {
    const cursors = [{ turns: 2, runs: 1, open: [0], from: 1 }, { turns: 'three' }]
    const ingress = await fakeIngress({ watched: true, cursor: call => cursors[call - 1] })
    close = ingress.close
    const doorbell = createEventDoorbell({ ingressUrl: ingress.url, windowMs: 0 })
    for (let turn = 1; turn <= 3; turn++) {
      doorbell.ring('t1~hint', { turns: turn, runs: 1 })
      await doorbell.idle()
    }
    expect(ingress.calls.map(call => call.body)).toEqual([
      { turns: 1, runs: 1 },
      { turns: 2, runs: 1, cursor: { turns: 2, runs: 1, open: [0], from: 1 } },
      { turns: 3, runs: 1 },
    ])
  })

  it('reports a failed call and calls again at the next ring', async () => {
    const ingress = await fakeIngress({ watched: true, status: 500 })
    close = ingress.close
    const failures: unknown[] = []
    const doorbell = createEventDoorbell({ ingressUrl: ingress.url, windowMs: 0, onError: error => failures.push(error) })
    doorbell.ring('t1~down', { turns: 1, runs: 1 })
    await doorbell.idle()
    doorbell.ring('t1~down', { turns: 2, runs: 1 })
    await doorbell.idle()
    expect(ingress.calls).toHaveLength(2)
    expect(failures).toHaveLength(2)
    expect(String(failures[0])).toContain('answered 500')
  })
})

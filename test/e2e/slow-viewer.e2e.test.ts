import { readFileSync } from 'node:fs'
import http from 'node:http'
import type { IncomingMessage } from 'node:http'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tenantOf } from '../../ingress-gateway/tenancy'
import { liveStreamPath } from '../../contract/live-delta'
import { lastUserText, start, streamedWords } from '../../support/anthropic-server'
import type { FakeAnthropicServer } from '../../support/anthropic-server'
import { openSseViewer } from '../../support/sse-client'
import type { SseViewer } from '../../support/sse-client'
import { printStackOutputOnFailure, startTestStack } from '../helpers/stack'
import type { TestStack } from '../helpers/stack'

const API_KEY = 'sk-ant-e2e'
/** How long the stalled readers read nothing. */
const STALL_MS = 60_000
/** Sessions that stream at a model's pace through the whole stall, beside the flooded one. */
const PACED_SESSIONS = 19
/** A flood every this long (about 50 in the stall): the floods are the bulk of what the stalled readers miss. */
const FLOOD_EVERY_MS = 1_000
/** Words of one flood: one model step whose deltas all arrive at once (about 75 KB of text, 2 MB of SSE frames). */
const FLOOD_WORDS = 10_000
/**
 * Both processes run with a 256 MiB heap limit (`--max-old-space-size`), as in a container with a memory limit: V8 then
 * collects before it grows its heap, so their RSS follows what they keep rather than when V8 gets round to collecting.
 * (Without a limit the services' RSS grew 45 to 190 MiB over the stall even with the cut-offs, by run and machine load,
 * while a heap snapshot at its end found 77 MiB of live objects.)
 */
const HEAP_LIMIT = '--max-old-space-size=256'
/**
 * Most each process's RSS may grow over the stall (its peak over its RSS when the stall starts). With the cut-offs a
 * stalled reader costs at most 1 MiB in each; the rest is the load's own growth, 14 to 25 MiB in the services and 6 to
 * 21 MiB in the gateway in our runs. Without the cut-offs each keeps every frame its stalled reader misses (about
 * 2 MiB a second here): with the heap limit the services grew 187 MiB in 40 s and died of it ("JavaScript heap out of
 * memory"), the gateway grew 211 MiB to its own limit; without the limit the services grew 537 MiB and the gateway
 * 286 MiB, steadily, over the 60 s.
 */
const MAX_RSS_GROWTH_MIB = { services: 64, gateway: 64 }
/**
 * Most a stalled reader may still read once it reads again: what the cut-off left in flight (1 MiB in the process, the
 * rest in the kernel's socket buffers). Without the cut-offs it could read the 100 MiB its process had buffered.
 */
const MAX_LEFT_IN_FLIGHT_BYTES = 16 * 1024 * 1024

/** VmRSS of process `pid`, in bytes; undefined once it is gone. */
function rssOf(pid: number): number | undefined {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024
  } catch {
    return undefined
  }
}

const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1)

/** What {@link recordRss} saw of one process: its RSS when the stall starts, its peak, every 10 s, and whether it died. */
interface RssRecord { start: number; peak: number; timeline: number[]; died: boolean }

type Processes = 'services' | 'gateway'

/** Samples the RSS of each process every 250 ms from now into `records`, until `stop()`. */
function recordRss(pids: Record<Processes, number>): { records: Record<Processes, RssRecord>; stop(): void } {
  const startMs = performance.now()
  const blank = (pid: number): RssRecord => ({ start: rssOf(pid) ?? 0, peak: 0, timeline: [], died: false })
  const records = { services: blank(pids.services), gateway: blank(pids.gateway) }
  const sample = (): void => {
    for (const name of ['services', 'gateway'] as const) {
      const record = records[name]
      const rss = rssOf(pids[name])
      if (rss === undefined) record.died = true
      if (rss === undefined) continue
      record.peak = Math.max(record.peak, rss)
      if (record.timeline.length <= (performance.now() - startMs) / 10_000) record.timeline.push(rss)
    }
  }
  const timer = setInterval(sample, 250)
  return { records, stop: () => { clearInterval(timer); sample() } }
}

/** A reader that reads nothing until `drain()`: a paused response stops node's HTTP client reading its socket once its buffer is full. */
interface StalledReader {
  status: number
  /** Reads what the peer left in flight, until the connection ends (it must: the peer cut it); resolves with the text. */
  drain(timeoutMs: number): Promise<{ text: string; ended: boolean }>
}

function stalledReader(url: string, headers: Record<string, string>): Promise<StalledReader> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent: false, headers }, (response: IncomingMessage) => {
      response.pause()
      let closed = false
      response.once('close', () => { closed = true })
      response.on('error', () => undefined)
      resolve({
        status: response.statusCode ?? 0,
        drain: timeoutMs => new Promise(done => {
          const chunks: Buffer[] = []
          const finish = (ended: boolean): void => { clearTimeout(timer); done({ text: Buffer.concat(chunks).toString('utf8'), ended }) }
          const timer = setTimeout(() => { request.destroy(); finish(false) }, timeoutMs)
          response.on('data', (chunk: Buffer) => chunks.push(chunk))
          response.resume()
          if (closed) setImmediate(() => finish(true))
          else response.once('close', () => finish(true))
        }),
      })
    })
    request.on('error', reject)
  })
}

/** A reader that reads and discards everything (a viewer far faster than the test's parsing one); returns its close. */
function discardingReader(url: string, headers: Record<string, string>): Promise<() => void> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { agent: false, headers }, response => {
      response.on('error', () => undefined)
      response.resume()
      resolve(() => request.destroy())
    })
    request.on('error', reject)
  })
}

/** The `seq`s of the complete SSE frames in `text` that carry an `id:`. */
function durableSeqs(text: string): number[] {
  const frames = text.split('\n\n').slice(0, -1)
  return frames.flatMap(frame => /^id: (\d+)$/m.exec(frame)?.[1] ?? []).map(Number)
}

const contiguous = (seqs: number[], from: number): boolean => seqs.every((seq, index) => seq === from + index)

describe('a viewer that reads nothing for 60 s while 20 sessions stream', { timeout: 240_000 }, () => {
  let stack: TestStack | undefined
  let model: FakeAnthropicServer | undefined
  const viewers: SseViewer[] = []
  const s = (): TestStack => { if (!stack) throw new Error('no stack'); return stack }
  printStackOutputOnFailure(() => stack)

  beforeAll(async () => {
    model = await start({ apiKey: API_KEY })
    model.setHandler(request => (lastUserText(request) === 'flood' ? streamedWords(FLOOD_WORDS, 0, 'w') : streamedWords(2_500, 40, 'w')))
    const limits = { GATEWAY_MAX_CONCURRENT_RUNS: '100', GATEWAY_MAX_EVENT_STREAMS: '100' }
    stack = await startTestStack({ ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_BASE_URL: model.url, ZIDANE_MODEL: 'claude-test', NODE_OPTIONS: HEAP_LIMIT, ...limits }, { tenants: 1 })
  }, 120_000)
  afterAll(async () => {
    for (const viewer of viewers) viewer.close()
    await stack?.destroy()
    await model?.close()
  })

  const post = async (sessionId: string, prompt: string, query = ''): Promise<number> => {
    const response = await s().request(`/v1/sessions/${sessionId}/prompts${query}`, { method: 'POST', body: JSON.stringify({ prompt }) })
    await response.arrayBuffer()
    return response.status
  }
  /** A viewer of the session's events (it opens before the session exists too, and waits for its first event). */
  const view = async (sessionId: string, headers: Record<string, string> = {}): Promise<SseViewer> => {
    for (let tries = 0; ; tries++) {
      const viewer = await openSseViewer(`${s().gatewayUrl}/v1/sessions/${sessionId}/events`, { authorization: `Bearer ${s().apiKeys[0]}`, ...headers })
      if (viewer.status === 200) return viewers[viewers.push(viewer) - 1] as SseViewer
      viewer.close()
      if (tries > 400) throw new Error(`the event stream answered ${viewer.status}`)
      await new Promise(resolve => setTimeout(resolve, 50))
    }
  }
  /** Resolves once `viewer` has `count` `run:end` events (polled: a viewer of a flood holds tens of thousands of frames). */
  const runEnds = async (viewer: SseViewer, count: number): Promise<void> => {
    for (const deadline = performance.now() + 60_000; viewer.frames.filter(frame => frame.event === 'run:end').length < count;) {
      if (performance.now() > deadline) throw new Error(`${count} run:end events did not arrive`)
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }
  const pidOf = (name: string): number => {
    const pid = s().processes.find(handle => handle.name === name)?.current()?.pid
    if (pid === undefined) throw new Error(`no ${name} process`)
    return pid
  }

  /** Floods the `flood` session every {@link FLOOD_EVERY_MS} for `durationMs`, at least once; resolves with how many ran. */
  const floodFor = async (durationMs: number): Promise<number> => {
    let floods = 0
    const endMs = performance.now() + durationMs
    do {
      const nextMs = performance.now() + FLOOD_EVERY_MS
      expect(await post('flood', 'flood', '?wait=true')).toBe(200)
      floods++
      await new Promise(resolve => setTimeout(resolve, nextMs - performance.now()))
    } while (performance.now() < endMs)
    return floods
  }

  /** The paced sessions stream to their viewers and two floods reach a viewer that reads them: the load's working set. */
  const warmUp = async (): Promise<SseViewer[]> => {
    for (let index = 0; index < PACED_SESSIONS; index++) expect(await post(`paced-${index}`, `stream ${index}`)).toBe(202)
    const paced = await Promise.all(Array.from({ length: PACED_SESSIONS }, async (_, index) => view(`paced-${index}`)))
    expect(await post('flood', 'flood', '?wait=true')).toBe(200)
    const closeWarm = await discardingReader(`${s().gatewayUrl}/v1/sessions/flood/events`, { authorization: `Bearer ${s().apiKeys[0]}` })
    expect(await floodFor(1)).toBe(1)
    expect(await floodFor(1)).toBe(1)
    closeWarm()
    return paced
  }

  /** A viewer that reconnects after `seen` (from 1, contiguous) gets every later durable event up to the last run's end. */
  const expectNoGap = async (seen: number[], runs: number): Promise<void> => {
    expect(contiguous(seen, 1)).toBe(true)
    const lastId = seen.at(-1) ?? 0
    const again = await view('flood', { 'last-event-id': String(lastId) })
    const full = await view('flood')
    await runEnds(full, runs)
    const end = Number(full.frames.filter(frame => frame.id !== undefined).at(-1)?.id)
    await again.waitFor(frame => Number(frame.id) === end, 60_000)
    const resumed = again.frames.filter(frame => frame.id !== undefined).map(frame => Number(frame.id))
    expect(resumed[0]).toBe(lastId + 1)
    expect(contiguous(resumed, lastId + 1)).toBe(true)
    expect(resumed.at(-1)).toBe(end)
  }

  it('cuts off the stalled readers, keeps both processes\' memory bounded, and the viewer reconnects without a gap', async () => {
    const auth = { authorization: `Bearer ${s().apiKeys[0]}` }
    const livePort = Number(/live deltas on 127\.0\.0\.1:(\d+)/.exec(s().output())?.[1])
    const liveToken = readFileSync(join(s().dataDir, 'live-token'), 'utf8').trim()
    const paced = await warmUp()
    const stalled = await stalledReader(`${s().gatewayUrl}/v1/sessions/flood/events`, { accept: 'text/event-stream', ...auth })
    const stalledHub = await stalledReader(`http://127.0.0.1:${livePort}${liveStreamPath(`${tenantOf(s().apiKeys[0])}~flood`)}`, { authorization: `Bearer ${liveToken}` })
    expect([stalled.status, stalledHub.status]).toEqual([200, 200])

    const rss = recordRss({ services: pidOf('services'), gateway: pidOf('gateway') })
    const line = (record: RssRecord): string => `${record.timeline.map(mib).join(' → ')} (peak ${mib(record.peak)}${record.died ? ', then it died' : ''})`
    const floods = await floodFor(STALL_MS).finally(() => {
      rss.stop()
      console.log(`[slow viewer] RSS every 10 s of the stall, MiB: services ${line(rss.records.services)}; gateway ${line(rss.records.gateway)}`)
    })
    const { services, gateway } = rss.records
    const [gatewayDrain, hubDrain] = await Promise.all([stalled.drain(10_000), stalledHub.drain(10_000)])
    console.log(`[slow viewer] ${floods} floods (~${mib(floods * FLOOD_WORDS * 200)} MiB of frames) in ${STALL_MS / 1000} s; then the stalled viewer read ${gatewayDrain.text.length} bytes, the stalled hub reader ${hubDrain.text.length}`)
    expect([services.died, gateway.died], 'a process died (out of memory?)').toEqual([false, false])
    expect(gatewayDrain.ended, 'the gateway cut the stalled viewer off').toBe(true)
    expect(hubDrain.ended, 'the hub cut the stalled reader off').toBe(true)
    expect(Math.max(gatewayDrain.text.length, hubDrain.text.length)).toBeLessThan(MAX_LEFT_IN_FLIGHT_BYTES)
    expect((services.peak - services.start) / 1024 / 1024, 'the services\' RSS growth (MiB)').toBeLessThan(MAX_RSS_GROWTH_MIB.services)
    expect((gateway.peak - gateway.start) / 1024 / 1024, 'the gateway\'s RSS growth (MiB)').toBeLessThan(MAX_RSS_GROWTH_MIB.gateway)
    const pacedDeltas = paced.map(viewer => viewer.frames.filter(frame => frame.event === 'model:delta').length)
    expect(Math.min(...pacedDeltas), 'every paced session streamed to its viewer through the stall').toBeGreaterThan(200)
    await expectNoGap(durableSeqs(gatewayDrain.text), floods + 3)
  })
})

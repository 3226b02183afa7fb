import { mkdtemp, rm } from 'node:fs/promises'
import { cpus, loadavg, tmpdir } from 'node:os'
import path from 'node:path'
import { freeStackPortsEnv } from '../scripts/stack/free-port'
import { loadStackConfig } from '../scripts/stack/stack-config'
import { startStack } from '../scripts/stack/start-stack'
import type { RunningStack } from '../scripts/stack/start-stack'
import type { StackConfig } from '../scripts/stack/stack-config'
import { createLiveDeltas } from '../ingress-gateway/live-deltas'
import { start as startModelServer } from '../support/anthropic-server'
import type { FakeAnthropicServer, RecordedRequest } from '../support/anthropic-server'
import { openSseViewer } from '../support/sse-client'
import type { SseViewer } from '../support/sse-client'
import { UNLIMITED_GATEWAY } from './lib/full-stack'
import type { BenchOptions } from './lib/options'
import { figureOf } from './lib/report'
import type { Report } from './lib/report'
import { pollUntil, summarize } from './lib/stats'
import { tenantOf } from '../ingress-gateway/tenancy'

const API_KEY = 'zk_bench_live_latency_key'
const MODEL_KEY = 'sk-ant-bench-live'

/** The text of the request's last user message: the prompt of the run in progress. */
function promptOf(request: RecordedRequest): string {
  const messages = (request.body?.messages as unknown as Array<{ role: string; content: string | Array<{ text?: string }> }> | undefined) ?? []
  const last = messages.filter(message => message.role === 'user').at(-1)
  if (!last) return ''
  return typeof last.content === 'string' ? last.content : last.content.map(block => block.text ?? '').join('')
}

/** Tokens of session `index`: `s<index>t<k>`, unique across the run, so each received delta names its send time. */
function tokensOf(index: number, count: number): string {
  return Array.from({ length: count }, (_, token) => `s${index}t${token}`).join(' ')
}

/** A model server that streams `tokens` tokens per measured prompt at a fixed interval and notes when it sent each. */
async function pacedModel(options: BenchOptions['live'], sentAtMs: Map<string, number>): Promise<FakeAnthropicServer> {
  const model = await startModelServer({
    apiKey: MODEL_KEY,
    onEventSent: event => {
      const delta = event.data.delta as { text?: string } | undefined
      if (event.event === 'content_block_delta' && typeof delta?.text === 'string') sentAtMs.set(delta.text.trim(), performance.now())
    },
  })
  model.setHandler(request => {
    const match = /^live (\d+)$/.exec(promptOf(request))
    if (!match) return { kind: 'message', content: [{ type: 'text', text: 'ready' }] }
    return { kind: 'message', content: [{ type: 'text', text: tokensOf(Number(match[1]), options.tokens) }], deltaIntervalMs: options.intervalMs }
  })
  return model
}

async function startLiveStack(dataDir: string, modelUrl: string): Promise<{ stack: RunningStack; config: StackConfig }> {
  const env = { ...process.env, ZIDANE_DATA_DIR: dataDir, GATEWAY_API_KEYS: API_KEY, ...(await freeStackPortsEnv()) }
  const config = await loadStackConfig(env)
  const extra = { ANTHROPIC_API_KEY: MODEL_KEY, ANTHROPIC_BASE_URL: modelUrl, ZIDANE_MODEL: 'claude-test', ZIDANE_WORKSPACE_ROOT: path.join(dataDir, 'workspaces'), LOG_LEVEL: 'warn', ...UNLIMITED_GATEWAY }
  return { stack: await startStack(config, reason => { process.stderr.write(`[bench] stack failed: ${reason}\n`) }, extra, () => undefined), config }
}

/** Follows the services' live hub directly (as the gateway does), noting when each token arrives: the services' share of the latency. */
function followHub(config: StackConfig, tenantKeys: readonly string[], hubAtMs: Map<string, number>): () => void {
  const live = createLiveDeltas({ urls: [`http://127.0.0.1:${config.livePort}`], token: config.liveToken })
  const stops = tenantKeys.map(key => live.subscribeLive(key, event => { if (event.type === 'model:delta') hubAtMs.set(event.data.text.trim(), performance.now()) }))
  return () => { for (const stop of stops) stop() }
}

async function prompt(gateway: string, sessionId: string, text: string, wait: boolean): Promise<void> {
  const response = await fetch(`${gateway}/v1/sessions/${sessionId}/prompts${wait ? '?wait=true' : ''}`, { method: 'POST', headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }, body: JSON.stringify({ prompt: text }) })
  await response.arrayBuffer()
  if (!response.ok) throw new Error(`prompt of ${sessionId} answered ${response.status}`)
}

/** Latency of every token of every session: viewer receipt minus the model server's send. */
function latencies(viewers: readonly SseViewer[], sentAtMs: ReadonlyMap<string, number>): number[] {
  const values: number[] = []
  for (const viewer of viewers) {
    for (const frame of viewer.frames) {
      if (frame.event !== 'model:delta') continue
      const sent = sentAtMs.get(String((frame.data.data as { text?: unknown } | undefined)?.text ?? '').trim())
      if (sent !== undefined) values.push(frame.receivedAtMs - sent)
    }
  }
  return values
}

/**
 * Latency of every durable event of the measured runs (`at` from `sinceMs` on): viewer receipt minus its `at`, the
 * services' durable clock at the write that made it (the same machine's clock as the bench's).
 */
function durableLatencies(viewers: readonly SseViewer[], sinceMs: number): number[] {
  const values: number[] = []
  for (const viewer of viewers) {
    for (const frame of viewer.frames) {
      const at = Number(frame.data.at)
      if (frame.id === undefined || !Number.isFinite(at) || at < sinceMs) continue
      values.push(performance.timeOrigin + frame.receivedAtMs - at)
    }
  }
  return values
}

/**
 * Section 8: live latency. `sessions` sessions stream `tokens` tokens each at once (the model server sends one every
 * `intervalMs`); a viewer per session follows `GET /v1/sessions/{id}/events`. Each token's latency is from the model
 * server writing it to the viewer receiving its `model:delta` (services → live hub → gateway → SSE), one clock.
 */
export async function measureLiveLatency(options: BenchOptions, report: Report): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'zidane-bench-live-'))
  const sentAtMs = new Map<string, number>()
  const model = await pacedModel(options.live, sentAtMs)
  const viewers: SseViewer[] = []
  const hubAtMs = new Map<string, number>()
  let stack: RunningStack | undefined
  let stopHub = (): void => undefined
  try {
    const started = await startLiveStack(dataDir, model.url)
    stack = started.stack
    const gateway = stack.gatewayUrl
    const ids = Array.from({ length: options.live.sessions }, (_, index) => `live-${process.pid}-${index}`)
    await Promise.all(ids.map(id => prompt(gateway, id, 'warm up', true)))
    stopHub = followHub(started.config, ids.map(id => `${tenantOf(API_KEY)}~${id}`), hubAtMs)
    for (const id of ids) viewers.push(await openSseViewer(`${gateway}/v1/sessions/${id}/events`, { authorization: `Bearer ${API_KEY}` }))
    const measuredFromMs = Date.now()
    await Promise.all(ids.map((id, index) => prompt(gateway, id, `live ${index}`, false)))
    const expected = options.live.sessions * options.live.tokens
    await pollUntil(() => (latencies(viewers, sentAtMs).length >= expected ? true : undefined), 60_000, `${expected} live deltas`, 100).catch(() => undefined)
    // Each measured run ends with run:end: wait for every viewer to have it.
    await pollUntil(() => (viewers.every(viewer => viewer.frames.some(frame => frame.event === 'run:end' && Number(frame.data.at) >= measuredFromMs)) ? true : undefined), 30_000, 'the runs\' ends', 100).catch(() => undefined)
    const toHub = [...hubAtMs].flatMap(([token, atMs]) => { const sent = sentAtMs.get(token); return sent === undefined ? [] : [atMs - sent] })
    addFigures(report, options, latencies(viewers, sentAtMs), toHub, expected)
    addDurableFigure(report, options, durableLatencies(viewers, measuredFromMs))
  } finally {
    stopHub()
    for (const viewer of viewers) viewer.close()
    await stack?.stop()
    await model.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}

function addFigures(report: Report, options: BenchOptions, values: number[], toHub: number[], expected: number): void {
  const summary = summarize(values)
  const hub = summarize(toHub)
  const p99 = summary.p99
  report.figures.push(figureOf(8, `live latency, model token → SSE viewer (${options.live.sessions} sessions streaming)`, 'ms', summary, {
    target: { text: 'p50 < 30, p99 < 150 ms', met: summary.median < 30 && p99 < 150 && values.length === expected },
    note: `p99 ${p99.toFixed(1)} ms`,
  }), figureOf(8, 'of which model token → services live hub (a follower in the bench)', 'ms', hub, { note: `p99 ${hub.p99.toFixed(1)} ms` }))
  report.notes.push(`§8 Live latency: ${options.live.sessions} sessions, ${options.live.tokens} tokens each, one every ${options.live.intervalMs} ms; ${values.length}/${expected} tokens reached their viewer; p50 ${summary.median.toFixed(1)} / p95 ${summary.p95.toFixed(1)} / p99 ${p99.toFixed(1)} ms (model server → services → live hub → gateway → SSE viewer, timed on the bench's one clock; load average ${loadavg()[0]?.toFixed(1) ?? '?'} on ${cpus().length} cores at the end).`)
}

function addDurableFigure(report: Report, options: BenchOptions, values: number[]): void {
  const summary = summarize(values)
  report.figures.push(figureOf(8, `durable event → SSE viewer (${options.live.sessions} sessions streaming; the event's at to its receipt)`, 'ms', summary, {
    target: { text: `p99 ${summary.p99.toFixed(0)} < 100 ms`, met: summary.p99 < 100 && values.length >= 3 * options.live.sessions },
    note: `p99 ${summary.p99.toFixed(1)} ms over ${values.length} events (run:start, turn:end, run:end of each run)`,
  }))
}

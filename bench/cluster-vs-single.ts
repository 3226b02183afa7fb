import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { loadClusterConfig, withFreePorts } from '../scripts/cluster/cluster-config'
import { startCluster } from '../scripts/cluster/start-cluster'
import { freeStackPortsEnv } from '../scripts/stack/free-port'
import { loadStackConfig } from '../scripts/stack/stack-config'
import { startStack } from '../scripts/stack/start-stack'
import type { ProcessHandle } from '../scripts/stack/supervisor'
import { UNLIMITED_GATEWAY, turnTimes } from './lib/full-stack'
import type { TurnView } from './lib/full-stack'
import type { BenchOptions } from './lib/options'
import { single } from './lib/report'
import type { Report } from './lib/report'
import { summarize } from './lib/stats'

const API_KEY = 'zk_bench_cluster_vs_single'
const SECTION = 9
const QUIET_GATEWAY = { ...UNLIMITED_GATEWAY, LOG_LEVEL: 'silent', ANTHROPIC_API_KEY: '' }

/**
 * One shape's result under the load: sessions per minute, the per-turn times of every session, and its tool calls
 * that failed (a session still completes when its tool calls fail: the model is told, and goes on).
 */
interface LoadResult { perMinute: number; completed: number; sessions: number; turnMs: number[]; wallMs: number; failedToolCalls: number }

/** A turn as the session read returns it, with its tool results' error flag. */
interface TurnWithResults extends TurnView { content?: { type: string; isError?: boolean }[] }

/** Tool results of `turns` that are errors. */
function failedToolCalls(turns: readonly TurnWithResults[]): number {
  return turns.flatMap(turn => turn.content ?? []).filter(part => part.type === 'tool_result' && part.isError === true).length
}

interface Deployment { gatewayUrl: string; stop(): Promise<void> }



/** `count` sessions started at once through the gateway (`?wait=true`), each a prompt of `writeLines` tool turns. */
async function runLoad(gatewayUrl: string, label: string, count: number, writeLines: number): Promise<LoadResult> {
  const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }
  const prompt = Array.from({ length: writeLines }, (_, line) => `write: notes/file-${line}.txt line ${line}`).join('\n')
  const ids = Array.from({ length: count }, (_, index) => `${label}-${process.pid}-${index}`)
  const started = performance.now()
  const outcomes = await Promise.all(ids.map(async id => {
    const response = await fetch(`${gatewayUrl}/v1/sessions/${id}/prompts?wait=true`, { method: 'POST', headers, body: JSON.stringify({ prompt }) })
    return response.ok && ((await response.json()) as { status?: string }).status === 'completed'
  }))
  const wallMs = performance.now() - started
  const turnMs: number[] = []
  let failed = 0
  for (const id of ids) {
    const view = (await (await fetch(`${gatewayUrl}/v1/sessions/${id}`, { headers })).json()) as { turns?: TurnWithResults[] }
    turnMs.push(...turnTimes(view.turns ?? []))
    failed += failedToolCalls(view.turns ?? [])
  }
  const completed = outcomes.filter(Boolean).length
  return { perMinute: (completed / wallMs) * 60_000, completed, sessions: count, turnMs, wallMs, failedToolCalls: failed }
}

/** Keeps the processes' output (the table stays readable) and prints its end when the deployment fails to start. */
function outputKeeper(): { log: (name: string, line: string) => void; failed: (error: unknown) => never } {
  const lines: string[] = []
  return {
    log: (name, line) => { lines.push(`[${name}] ${line}`); if (lines.length > 200) lines.shift() },
    failed: error => {
      process.stderr.write(`${lines.slice(-40).join('\n')}\n`)
      throw error
    },
  }
}

async function singleNode(dataDir: string): Promise<Deployment> {
  const output = outputKeeper()
  const config = await loadStackConfig({ ...process.env, ZIDANE_DATA_DIR: dataDir, GATEWAY_API_KEYS: API_KEY, ...(await freeStackPortsEnv()) })
  const stack = await startStack(config, reason => { process.stderr.write(`[bench] single node failed: ${reason}\n`) }, { ...QUIET_GATEWAY, ZIDANE_WORKSPACE_ROOT: path.join(dataDir, 'workspaces') }, output.log).catch(output.failed)
  return { gatewayUrl: stack.gatewayUrl, stop: () => stack.stop() }
}

async function cluster(dataDir: string): Promise<Deployment> {
  const output = outputKeeper()
  const config = await withFreePorts(await loadClusterConfig({ ...process.env, ZIDANE_DATA_DIR: dataDir, GATEWAY_API_KEYS: API_KEY }))
  const processes: ProcessHandle[] = []
  const running = await startCluster(config, reason => { process.stderr.write(`[bench] cluster failed: ${reason}\n`) }, { extraEnv: QUIET_GATEWAY, log: output.log, processes }).catch(async (error: unknown) => {
    for (const handle of [...processes].reverse()) await handle.stop()
    return output.failed(error)
  })
  return { gatewayUrl: running.gatewayUrl, stop: () => running.stop() }
}

/** Starts a deployment in a fresh folder, warms it up, runs the load, and stops it. */
async function measure(start: (dataDir: string) => Promise<Deployment>, label: string, count: number, writeLines: number): Promise<LoadResult> {
  const dataDir = await mkdtemp(path.join(tmpdir(), `zidane-bench-${label}-`))
  let deployment: Deployment | undefined
  try {
    deployment = await start(dataDir)
    await runLoad(deployment.gatewayUrl, `${label}-warmup`, 10, writeLines)
    return await runLoad(deployment.gatewayUrl, label, count, writeLines)
  } finally {
    await deployment?.stop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

/**
 * Section 9: the same burst of sessions (the demo model, `write:` tool turns) on one Restate node (`npm start`) and
 * on the loopback cluster (`npm run start:cluster`: three nodes, replication 2, two services replicas, two gateways),
 * one after the other on this machine: sessions per minute and p99 time per turn of each, and their ratio.
 */
export async function measureClusterVsSingle(options: BenchOptions, report: Report): Promise<void> {
  const count = options.quick ? 30 : 90
  const writeLines = 6
  const one = await measure(singleNode, 'single', count, writeLines)
  const three = await measure(cluster, 'cluster', count, writeLines)
  const oneTurns = summarize(one.turnMs)
  const threeTurns = summarize(three.turnMs)
  const turns = writeLines + 1
  report.figures.push(
    single(SECTION, `single node: ${count} sessions at once, ${turns} turns each`, 'sessions/min', one.perMinute, { note: `${one.completed}/${one.sessions} completed, ${one.failedToolCalls} failed tool calls` }),
    single(SECTION, `3-node cluster: the same load`, 'sessions/min', three.perMinute, { ratio: { value: three.perMinute / one.perMinute, to: 'single node' }, note: `${three.completed}/${three.sessions} completed, ${three.failedToolCalls} failed tool calls` }),
    single(SECTION, 'single node: p99 time per turn', 'ms', oneTurns.p99),
    single(SECTION, '3-node cluster: p99 time per turn', 'ms', threeTurns.p99, { ratio: { value: threeTurns.p99 / Math.max(1, oneTurns.p99), to: 'single node' } }),
  )
  report.notes.push(`§${SECTION} Same load, one after the other on this machine: single node ${one.completed}/${one.sessions} sessions in ${(one.wallMs / 1000).toFixed(1)} s, ${one.failedToolCalls} of ${one.sessions * writeLines} tool calls failed (turn p50 ${oneTurns.median.toFixed(0)} / p99 ${oneTurns.p99.toFixed(0)} ms); cluster ${three.completed}/${three.sessions} in ${(three.wallMs / 1000).toFixed(1)} s, ${three.failedToolCalls} failed (turn p50 ${threeTurns.median.toFixed(0)} / p99 ${threeTurns.p99.toFixed(0)} ms). All three nodes, both services replicas and both gateways share the same 2 cores, and every log record is written by two nodes: this measures the cost of replication on one machine, not the capacity of three machines.`)
}

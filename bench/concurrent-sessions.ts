import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { freeStackPortsEnv } from '../scripts/stack/free-port'
import { loadStackConfig } from '../scripts/stack/stack-config'
import { startStack } from '../scripts/stack/start-stack'
import type { RunningStack } from '../scripts/stack/start-stack'
import { UNLIMITED_GATEWAY, turnTimes } from './lib/full-stack'
import type { TurnView } from './lib/full-stack'
import type { BenchOptions } from './lib/options'
import { peakRssMiB } from './lib/process-memory'
import { figureOf, single } from './lib/report'
import type { Report } from './lib/report'
import { sleepMs, summarize } from './lib/stats'

const API_KEY = 'zk_bench_concurrent_sessions'


/** Drops the stack's prefixed child output (`[restate] …`, `[gateway] …`) so the table stays readable. */
function muteStackOutput(): () => void {
  const write = process.stdout.write.bind(process.stdout)
  const forward = write as (...args: unknown[]) => boolean
  const filtered = (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    if (/^\[(restate|services|gateway|stack)\]/.test(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString())) return true
    return forward(chunk, ...rest)
  }
  process.stdout.write = filtered
  return () => { process.stdout.write = write }
}


async function startBenchStack(dataDir: string): Promise<RunningStack> {
  const env = { ...process.env, ZIDANE_DATA_DIR: dataDir, GATEWAY_API_KEYS: API_KEY, ...(await freeStackPortsEnv()) }
  const config = await loadStackConfig(env)
  return startStack(config, reason => { process.stderr.write(`[bench] stack failed: ${reason}\n`) }, { ANTHROPIC_API_KEY: '', ZIDANE_WORKSPACE_ROOT: path.join(dataDir, 'workspaces'), ...UNLIMITED_GATEWAY })
}


interface Batch { wallMs: number; completed: number; sessions: number; perTurn: number[]; failures: string[] }

/** Starts one session per id, `startIntervalMs` apart (0: all at once), and waits for all; per-turn times read back after. */
async function runBatch(gateway: string, ids: readonly string[], prompt: string, startIntervalMs: number): Promise<Batch> {
  const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' }
  const send = async (id: string, index: number): Promise<{ ok: boolean; status: string }> => {
    if (startIntervalMs > 0) await sleepMs(index * startIntervalMs)
    const response = await fetch(`${gateway}/v1/sessions/${id}/prompts?wait=true`, { method: 'POST', headers, body: JSON.stringify({ prompt }) })
    const body = (await response.json()) as { status?: string; error?: { code: string } }
    return { ok: response.ok && body.status === 'completed', status: body.status ?? body.error?.code ?? String(response.status) }
  }
  const started = performance.now()
  const outcomes = await Promise.all(ids.map(send))
  const wallMs = performance.now() - started
  const perTurn: number[] = []
  for (const id of ids) {
    const view = (await (await fetch(`${gateway}/v1/sessions/${id}`, { headers })).json()) as { turns?: TurnView[] }
    perTurn.push(...turnTimes(view.turns ?? []))
  }
  const failures = [...new Set(outcomes.filter(outcome => !outcome.ok).map(outcome => outcome.status))]
  return { wallMs, completed: outcomes.filter(outcome => outcome.ok).length, sessions: ids.length, perTurn, failures }
}

/**
 * Section 5: sessions against the whole stack (gateway → Restate → services, the demo model), each a prompt of
 * `write:` lines (one tool turn per line, then the final turn): a burst of `count` started at once (throughput), then
 * sessions arriving at the target rate of 200/min (time per turn at that load). Per-turn times come from the turns'
 * journaled timestamps; the services process's peak RSS from /proc.
 */
export async function measureConcurrentSessions(options: BenchOptions, report: Report): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'zidane-bench-stack-'))
  const unmute = muteStackOutput()
  let stack: RunningStack | undefined
  try {
    stack = await startBenchStack(dataDir)
    const prompt = Array.from({ length: options.sessions.writeLines }, (_, line) => `write: notes/file-${line}.txt line ${line}`).join('\n')
    const ids = (batch: string, count: number): string[] => Array.from({ length: count }, (_, index) => `${batch}-${process.pid}-${index}`)
    await runBatch(stack.gatewayUrl, ids('warmup', 10), prompt, 0)
    const burst = await runBatch(stack.gatewayUrl, ids('burst', options.sessions.count), prompt, 0)
    const paced = await runBatch(stack.gatewayUrl, ids('paced', options.sessions.pacedCount), prompt, 300)
    const services = stack.processes.find(handle => handle.name === 'services')?.current()?.pid
    const memory = services === undefined ? [] : peakRssMiB(services)
    addFigures(report, options, burst, paced, memory)
  } finally {
    await stack?.stop()
    unmute()
    await rm(dataDir, { recursive: true, force: true })
  }
}

function addFigures(report: Report, options: BenchOptions, burst: Batch, paced: Batch, memory: ReturnType<typeof peakRssMiB>): void {
  const perMinute = (burst.completed / burst.wallMs) * 60_000
  const burstTurns = summarize(burst.perTurn)
  const pacedTurns = summarize(paced.perTurn)
  const turns = options.sessions.writeLines + 1
  report.figures.push(
    single(5, `${burst.sessions} sessions at once via gateway, ${turns} turns each`, 'sessions/min', perMinute, { target: { text: '≥ 200/min', met: perMinute >= 200 }, note: `${burst.completed}/${burst.sessions} completed in ${(burst.wallMs / 1000).toFixed(1)} s` }),
    { ...figureOf(5, `time per turn in that burst (${burst.sessions} concurrent)`, 'ms', burstTurns), note: `p99 ${burstTurns.p99.toFixed(0)} ms` },
    { ...figureOf(5, `time per turn, sessions arriving at 200/min (${paced.sessions})`, 'ms', pacedTurns), target: { text: `p99 ${pacedTurns.p99.toFixed(0)} < 100 ms`, met: pacedTurns.p99 < 100 && paced.completed === paced.sessions } },
    single(5, 'services process peak RSS (VmHWM)', 'MiB', Math.max(0, ...memory.map(entry => entry.peakMiB))),
  )
  const failures = [...burst.failures, ...paced.failures]
  report.notes.push(`§5 Through the gateway (POST /v1/sessions/{id}/prompts?wait=true): burst ${burst.completed}/${burst.sessions} completed in ${(burst.wallMs / 1000).toFixed(1)} s, per turn p50 ${burstTurns.median.toFixed(0)} / p95 ${burstTurns.p95.toFixed(0)} / p99 ${burstTurns.p99.toFixed(0)} ms; at 200 sessions/min ${paced.completed}/${paced.sessions} completed, per turn p50 ${pacedTurns.median.toFixed(0)} / p95 ${pacedTurns.p95.toFixed(0)} / p99 ${pacedTurns.p99.toFixed(0)} ms (turn times have 1 ms resolution)${failures.length > 0 ? `; failures: ${failures.join(', ')}` : ''}. Peak RSS (VmHWM of the supervised pid and its children; with a tsx launcher the larger is the services process): ${describePeaks(memory)}.`)
}

/** The peak RSS of each process but the file-tool workers, which are summed up: a burst starts one per file call in flight, at most 16 per tenant. */
function describePeaks(memory: ReadonlyArray<{ command: string; pid: number; peakMiB: number }>): string {
  const workers = memory.filter(entry => entry.command.includes('zidane-file-worker'))
  const others = memory.filter(entry => !workers.includes(entry)).map(entry => `${entry.command.split('/').slice(-2).join('/')} (pid ${entry.pid}) ${entry.peakMiB.toFixed(0)} MiB`)
  if (workers.length > 0) others.push(`${workers.length} file-worker processes, largest ${Math.max(...workers.map(entry => entry.peakMiB)).toFixed(0)} MiB`)
  return others.join(', ')
}

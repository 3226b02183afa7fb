import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { interleave, paired } from './lib/interleave'
import { journalCensus } from './lib/journal'
import type { BenchOptions } from './lib/options'
import { figureOf, single } from './lib/report'
import type { Report } from './lib/report'
import type { BenchServer } from './lib/restate-server'
import type { BenchRunRequest, BenchRunResult } from './lib/restate-services'
import { liveToolCalls } from './lib/restate-services'
import { sleepMs, summarize } from './lib/stats'

const MiB = 1024 * 1024

interface InvocationRow { status?: string; retry_count?: number; journal_size?: number; last_failure?: string; last_failure_error_code?: string }

async function invocationRow(server: BenchServer, invocationId: string): Promise<InvocationRow> {
  const rows = await server.query<InvocationRow>(`SELECT status, retry_count, journal_size, last_failure, last_failure_error_code FROM sys_invocation WHERE id = '${invocationId}'`)
  return rows[0] ?? {}
}

let sequence = 0
async function runOnce(server: BenchServer, request: BenchRunRequest): Promise<BenchRunResult & { invocationId: string }> {
  const { body } = await server.call<BenchRunResult>(`BenchAgent/large-${process.pid}-${++sequence}/run`, request)
  return body
}

/** 5 MB: time (paired with a short output), what the journal stores, and that the invocation completed without retries. */
async function measureFiveMegabytes(server: BenchServer, options: BenchOptions, persistDir: string, report: Report): Promise<void> {
  const last: Record<string, string> = {}
  const probe = (name: string, request: BenchRunRequest) => ({ name, measure: async () => { const run = await runOnce(server, request); last[name] = run.invocationId; return run.wallMs } })
  const samples = await interleave([
    probe('small', { toolTurns: 1, modelDelayMs: 0 }),
    probe('5 MB', { toolTurns: 1, modelDelayMs: 0, outputBytes: 5 * MiB }),
    probe('5 MB persisted', { toolTurns: 1, modelDelayMs: 0, outputBytes: 5 * MiB, behavior: { persistDir } }),
  ], 1, options.largeOutputs.rounds)
  for (const name of ['5 MB', '5 MB persisted']) {
    const census = await journalCensus(server, last[name] ?? '')
    const row = await invocationRow(server, last[name] ?? '')
    const extra = summarize(paired(samples, name, 'small', (large, small) => large - small))
    const stuck = row.status !== 'completed' || (row.retry_count ?? 0) > 1
    report.figures.push(
      figureOf(7, `restate: extra time of a ${name} tool output`, 'ms', extra),
      single(7, `restate: journal of that run (${name})`, 'MiB', census.bytes / MiB, { note: `status ${row.status ?? '?'}, retry_count ${row.retry_count ?? 0}`, target: { text: 'completes, no retry loop', met: !stuck } }),
    )
    const big = census.kinds.filter(kind => kind.bytes > 256 * 1024).map(kind => `${kind.label} ×${kind.count} = ${(kind.bytes / MiB).toFixed(1)} MiB`)
    report.notes.push(`§7 ${name}: journal ${(census.bytes / MiB).toFixed(1)} MiB in ${census.entries} entries, status ${row.status ?? '?'}, retry_count ${row.retry_count ?? 0}; large entries: ${big.join('; ') || 'none'}.`)
  }
}

interface FortyResult { row: InvocationRow; toolRuns: number; output: BenchRunResult | undefined }

/** Sends a 40 MB run, watches it for `watchMs`, reads its status, output and tool executions, then kills it if still running. */
async function watchForty(server: BenchServer, watchMs: number, replaySafe: boolean): Promise<FortyResult> {
  const key = `large40-${replaySafe ? 'safe' : 'unsafe'}-${process.pid}`
  const request: BenchRunRequest = { toolTurns: 1, modelDelayMs: 0, outputBytes: 40 * MiB, countToolCalls: true, replaySafe }
  const response = await fetch(`${server.ingressUrl}/BenchAgent/${key}/run/send`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(request) })
  const { invocationId } = (await response.json()) as { invocationId: string }
  await sleepMs(watchMs)
  const row = await invocationRow(server, invocationId)
  const toolRuns = liveToolCalls.get(key) ?? 0
  let output: BenchRunResult | undefined
  if (row.status === 'completed') output = (await (await fetch(`${server.ingressUrl}/restate/invocation/${invocationId}/output`)).json()) as BenchRunResult
  else await fetch(`${server.adminUrl}/invocations/${invocationId}/kill`, { method: 'PATCH' })
  return { row, toolRuns, output }
}

/**
 * 40 MB, over Restate's 32 MiB message limit: once with the bench tool as it is (not replay-safe) and once marked
 * `replay: 'safe'`; then with `persistDir`, which keeps the output out of the journal.
 */
async function measureFortyMegabytes(server: BenchServer, options: BenchOptions, persistDir: string, report: Report): Promise<void> {
  const watch = options.largeOutputs.watchMs
  for (const replaySafe of [false, true]) {
    const { row, toolRuns, output } = await watchForty(server, watch, replaySafe)
    const lost = output !== undefined && !output.lastToolResult.startsWith('xxxx')
    const label = replaySafe ? "replay: 'safe' tool" : 'default tool'
    const cut = output?.lastToolResult.includes('were left out') === true
    const verdict = row.status !== 'completed' ? 'POISONED: stuck retrying (killed by the bench)' : lost ? `completed, but the output was LOST: the model got "${output.lastToolResult.slice(0, 60)}…"` : cut ? 'completed; the model got the head and tail of the output (cut to the 1 MiB journal limit)' : 'completed with the output'
    report.figures.push(single(7, `restate: 40 MB output, ${label}, after ${watch / 1000} s`, 'tool runs', toolRuns, { target: { text: 'runs once, completes (output cut to 1 MiB)', met: row.status === 'completed' && !lost && toolRuns === 1 }, note: `${row.status ?? '?'}, retry_count ${row.retry_count ?? 0}` }))
    report.notes.push(`§7 40 MB, ${label}: after ${watch / 1000} s status ${row.status ?? '?'}, retry_count ${row.retry_count ?? 0}, last failure ${row.last_failure_error_code ?? '-'} "${(row.last_failure ?? '').slice(0, 140)}"; the tool ran ${toolRuns}×. ${verdict}.`)
  }
  const started = performance.now()
  const persisted = await runOnce(server, { toolTurns: 1, modelDelayMs: 0, outputBytes: 40 * MiB, behavior: { persistDir } })
  const persistedRow = await invocationRow(server, persisted.invocationId)
  const census = await journalCensus(server, persisted.invocationId)
  report.figures.push(single(7, 'restate: 40 MB tool output with persistDir', 'ms', performance.now() - started, { note: `status ${persistedRow.status ?? '?'}, journal ${(census.bytes / 1024).toFixed(0)} KiB`, target: { text: 'completes', met: persistedRow.status === 'completed' } }))
}

/** Section 7: large tool outputs on Restate. */
export async function measureLargeOutputs(server: BenchServer, options: BenchOptions, report: Report): Promise<void> {
  const persistDir = mkdtempSync(path.join(tmpdir(), 'zidane-bench-persist-'))
  try {
    await measureFiveMegabytes(server, options, persistDir, report)
    await measureFortyMegabytes(server, options, persistDir, report)
  } finally {
    rmSync(persistDir, { recursive: true, force: true })
  }
}

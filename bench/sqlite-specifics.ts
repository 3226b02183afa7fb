import { mkdtempSync, rmSync } from 'node:fs'
import { writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { createAgent } from 'zidane'
import { createSqliteRuntime } from 'zidane/durable/sqlite'
import { flat, interleave, paired } from './lib/interleave'
import type { BenchOptions } from './lib/options'
import { figureOf, single } from './lib/report'
import type { Report } from './lib/report'
import { benchProvider, echoTool, timeScriptedRun } from './lib/scripted-run'
import { nowMs, summarize } from './lib/stats'

const FIVE_MB = 5 * 1024 * 1024

/** Fills `file` with `runs` one-turn runs, `runsPerSession` per session (NORMAL sync: only the content matters). */
async function buildBigFile(file: string, runs: number, runsPerSession: number): Promise<{ sessions: string[]; buildMs: number }> {
  const runtime = createSqliteRuntime({ path: file, synchronous: 'NORMAL' })
  const started = nowMs()
  const sessions: string[] = []
  for (let session = 0; session < runs / runsPerSession; session++) {
    const sessionId = `big-${session}`
    sessions.push(sessionId)
    const agent = createAgent({ provider: benchProvider({ toolTurns: 0, modelDelayMs: 0 }), tools: [echoTool(undefined)], durable: runtime, sessionId })
    for (let run = 0; run < runsPerSession; run++) await agent.run({ prompt: `run ${run}` })
  }
  runtime.close()
  return { sessions, buildMs: nowMs() - started }
}

/** Section 6a: opening a session (`agent.session()`) in a file holding 10,000 runs; also opening the file itself. */
async function measureSessionOpen(folder: string, options: BenchOptions, report: Report): Promise<void> {
  const file = path.join(folder, 'big.db')
  const { sessions, buildMs } = await buildBigFile(file, options.sqlite.runs, options.sqlite.runsPerSession)
  const fileOpens: number[] = []
  for (let open = 0; open < 20; open++) {
    const started = nowMs()
    const runtime = createSqliteRuntime({ path: file })
    fileOpens.push(nowMs() - started)
    runtime.close()
  }
  const runtime = createSqliteRuntime({ path: file })
  const opens: number[] = []
  try {
    for (let open = 0; open < options.sqlite.opens + 100; open++) {
      const sessionId = sessions[(open * 7919) % sessions.length] as string
      const agent = createAgent({ provider: benchProvider({ toolTurns: 0, modelDelayMs: 0 }), durable: runtime, sessionId })
      const started = nowMs()
      const session = await agent.session()
      if (open >= 100) opens.push(nowMs() - started)
      if (session.runs.length !== options.sqlite.runsPerSession) throw new Error(`session ${sessionId} has ${session.runs.length} runs`)
    }
  } finally {
    runtime.close()
  }
  const summary = summarize(opens)
  report.figures.push(
    figureOf(6, `open a session (${options.sqlite.runsPerSession} runs) in a file of ${options.sqlite.runs} runs`, 'ms', summary, { target: { text: '< 0.2 ms (seed < 0.4)', met: summary.median < 0.2 } }),
    figureOf(6, 'open the 10,000-run file (createSqliteRuntime)', 'ms', summarize(fileOpens)),
  )
  report.notes.push(`§6 The 10,000-run file (${sessions.length} sessions × ${options.sqlite.runsPerSession} one-turn runs) was written in ${(buildMs / 1000).toFixed(1)} s; a session open is \`createAgent({ durable, sessionId }).session()\` on a warm runtime, sessions picked across the file.`)
}

/**
 * Section 6b: the extra time of one 5 MB tool output on SQLite (FULL), with and without `behavior.persistDir`, and the
 * persisted run as a multiple of the short one (per round, so drift cancels).
 */
async function measureLargeOutput(folder: string, options: BenchOptions, report: Report): Promise<void> {
  const runtime = createSqliteRuntime({ path: path.join(folder, 'large.db') })
  const persistDir = path.join(folder, 'persisted')
  let sequence = 0
  const bareText = 'x'.repeat(FIVE_MB)
  const bareWrite = async (): Promise<number> => {
    const started = nowMs()
    await writeFile(path.join(folder, `bare-${++sequence}.txt`), bareText)
    return nowMs() - started
  }
  const run = (outputBytes: number | undefined, behavior = {}) => async () => (await timeScriptedRun({ toolTurns: 1, modelDelayMs: 0, ...(outputBytes === undefined ? {} : { outputBytes }) }, runtime, { sessionId: `large-${++sequence}` }, behavior)).wallMs
  try {
    const samples = await interleave([
      { name: 'small', measure: run(undefined) },
      { name: '5 MB', measure: run(FIVE_MB) },
      { name: '5 MB persisted', measure: run(FIVE_MB, { persistDir }) },
      { name: 'bare 5 MB write', measure: bareWrite },
    ], 1, options.sqlite.largeRounds)
    const extra = (name: string) => summarize(paired(samples, name, 'small', (large, small) => large - small))
    const persistedRatio = summarize(paired(samples, '5 MB persisted', 'small', (large, small) => large / small))
    // What dominates the persisted run: writing the 5 MB file itself (the short run plus that write is its floor).
    const writeFloorRatio = summarize(paired(samples, 'bare 5 MB write', 'small', (write, small) => (small + write) / small))
    report.figures.push(
      figureOf(6, 'sqlite: extra time of a 5 MB tool output', 'ms', extra('5 MB')),
      figureOf(6, 'sqlite: extra time of a 5 MB tool output, persistDir', 'ms', extra('5 MB persisted')),
      single(6, 'sqlite: the same 2-turn run with a short output', 'ms', summarize(flat(samples, 'small')).median),
      figureOf(6, 'sqlite: 5 MB persisted output run ÷ short run', '×', persistedRatio, { target: { text: '≤ 3×', met: persistedRatio.median <= 3 }, note: `floor (short run + a bare 5 MB writeFile) ÷ short run: ${writeFloorRatio.median.toFixed(2)}×` }),
      figureOf(6, 'bare 5 MB writeFile in the same folder (the persisted output\'s floor)', 'ms', summarize(flat(samples, 'bare 5 MB write'))),
    )
  } finally {
    runtime.close()
  }
}

/**
 * Section 6: SQLite specifics. The large outputs are measured first, their figures listed after: right after the
 * 10,000-run file was written, the kernel is still flushing it, and a file created then waited 10 to 30 ms for
 * `mkdir`/`open` in the first rounds (the runtime's cost is what is measured, not the previous measurement's).
 */
export async function measureSqliteSpecifics(options: BenchOptions, report: Report): Promise<void> {
  const folder = mkdtempSync(path.join(tmpdir(), 'zidane-bench-sqlite6-'))
  try {
    const largeOutputs: Report = { figures: [], notes: [] }
    await measureLargeOutput(folder, options, largeOutputs)
    await measureSessionOpen(folder, options, report)
    report.figures.push(...largeOutputs.figures)
    report.notes.push(...largeOutputs.notes)
  } finally {
    rmSync(folder, { recursive: true, force: true })
  }
}

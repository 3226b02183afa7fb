import { execFileSync } from 'node:child_process'
import path from 'node:path'
import { checkoutCommit } from './lib/commit-checkout'
import { assistantTurns, runGatewayBatch, sessionsPerMinute } from './lib/gateway-batch'
import type { GatewayBatch } from './lib/gateway-batch'
import { flat, interleave, paired } from './lib/interleave'
import type { Probe } from './lib/interleave'
import type { BenchOptions } from './lib/options'
import { figureOf, single } from './lib/report'
import { runJournal } from './lib/run-journal'
import type { RunJournal } from './lib/run-journal'
import type { Report } from './lib/report'
import { startSpawnedStack } from './lib/spawned-stack'
import type { SpawnedStack } from './lib/spawned-stack'
import { quantile, summarize } from './lib/stats'
import { countWorkersDuring } from './lib/worker-census'
import { invokerTasks } from './lib/invoker-tasks'

const SECTION = 14
/** The commit of Nov 30 whose throughput issue #31 asks to reach again. */
export const BASELINE_COMMIT = '2e22e21'
const BASELINE_LABEL = `Nov 30 (${BASELINE_COMMIT})`
const REPO_ROOT = path.resolve(import.meta.dirname, '..')
/**
 * The source the `current` side runs: the working tree, or with `ZIDANE_BENCH_CURRENT_REF` set (`HEAD`, a commit) that
 * ref checked out as the baseline is, so edits under way in the tree do not shape the figure.
 */
async function currentSource(): Promise<{ root: string; label: string }> {
  const ref = process.env.ZIDANE_BENCH_CURRENT_REF
  if (!ref) return { root: REPO_ROOT, label: 'the working tree' }
  const commit = execFileSync('git', ['-C', REPO_ROOT, 'rev-parse', '--short=12', ref], { encoding: 'utf8' }).trim()
  return { root: (await checkoutCommit(REPO_ROOT, commit)).folder, label: `${ref} (${commit})` }
}

/** Sessions whose run journal is counted on each stack, from the warm-up (every one of them completed its 10 turns). */
const CENSUS_SESSIONS = 3

/** What the probes of one stack keep besides their samples: each batch, and the file-tool workers seen during it. */
interface StackRecords { batches: Map<string, GatewayBatch[]>; workers: Map<string, number[]> }

/** A probe sending one batch of `sessions` to `stack` per round (`intervalMs` apart, 0: at once); returns sessions/min. */
function batchProbe(name: string, stack: SpawnedStack, records: StackRecords, options: BenchOptions['baseline'], intervalMs: number): Probe {
  let round = 0
  const prompt = Array.from({ length: options.writeLines }, (_, line) => `write: notes/file-${line}.txt line ${line}`).join('\n')
  return {
    name,
    async measure() {
      const ids = Array.from({ length: options.sessions }, (_, index) => `${name.replace(/\W+/g, '-')}-${process.pid}-r${round}-${index}`)
      round += 1
      const { result: batch, workers } = await countWorkersDuring(() => runGatewayBatch(stack, ids, prompt, intervalMs))
      records.batches.set(name, [...(records.batches.get(name) ?? []), batch])
      records.workers.set(name, [...(records.workers.get(name) ?? []), workers])
      return sessionsPerMinute(batch)
    },
  }
}

/** Warms `stack` up with a batch of 10, checks its demo runs make the turns the prompt asks for; returns their ids. */
async function warmUp(stack: SpawnedStack, options: BenchOptions['baseline']): Promise<string[]> {
  const prompt = Array.from({ length: options.writeLines }, (_, line) => `write: notes/file-${line}.txt line ${line}`).join('\n')
  const ids = Array.from({ length: 10 }, (_, index) => `warmup-${process.pid}-${index}`)
  const batch = await runGatewayBatch(stack, ids, prompt, 0)
  if (batch.completed !== batch.sessions) throw new Error(`${stack.label} warm-up: ${batch.completed}/${batch.sessions} completed (${batch.failures.join(', ')})`)
  const turns = await assistantTurns(stack, ids[0] ?? '')
  if (turns !== options.writeLines + 1) throw new Error(`${stack.label} warm-up run made ${turns} turns, expected ${options.writeLines + 1}`)
  return ids
}

/**
 * Section 14 (opt-in: `--only 14`): throughput through the gateway against the Nov 30 commit, side by side. The
 * commit is checked out into a kept temporary folder (`git archive | tar -x`, `npm ci`), both stacks start by their own
 * `scripts/start.ts` on free ports, and rounds alternate them: `sessions` runs of `writeLines + 1` demo turns at once,
 * and the same number arriving at a fixed rate. Prints each stack's sessions per minute, `current ÷ Nov 30` (medians
 * of per-round ratios) and the journal entries of a run of each.
 */
export async function measureThroughputAgainstCommit(options: BenchOptions, report: Report): Promise<void> {
  const started = performance.now()
  const checkout = await checkoutCommit(REPO_ROOT, BASELINE_COMMIT)
  const source = await currentSource()
  const stacks: SpawnedStack[] = []
  try {
    const current = await startSpawnedStack('current', source.root)
    stacks.push(current)
    const baseline = await startSpawnedStack(BASELINE_LABEL, checkout.folder)
    stacks.push(baseline)
    const sizes = options.baseline
    const warmedUp = new Map([[current, await warmUp(current, sizes)], [baseline, await warmUp(baseline, sizes)]])
    const records = new Map<SpawnedStack, StackRecords>(stacks.map(stack => [stack, { batches: new Map(), workers: new Map() }]))
    const intervalMs = 60_000 / sizes.pacedPerMinute
    const names = namesOf(sizes)
    const probes = stacks.flatMap((stack, index) => {
      const kept = records.get(stack) as StackRecords
      const side = index === 0 ? names.current : names.baseline
      return [batchProbe(side.burst, stack, kept, sizes, 0), batchProbe(side.paced, stack, kept, sizes, intervalMs)]
    })
    const tasksBefore = await Promise.all(stacks.map(stack => invokerTasks(stack.metricsUrl)))
    const samples = await interleave(probes, sizes.warmupRounds, sizes.rounds)
    await new Promise(resolve => setTimeout(resolve, 2_000)) // the runs' trailing invocations (their ends' reports, last syncs)
    const tasksAfter = await Promise.all(stacks.map(stack => invokerTasks(stack.metricsUrl)))
    const sessionsRun = (stack: SpawnedStack): number => [...(records.get(stack)?.batches.values() ?? [])].flat().reduce((sum, batch) => sum + batch.sessions, 0)
    const tasksPerRun = stacks.map((stack, index) => ((tasksAfter[index] ?? 0) - (tasksBefore[index] ?? 0)) / Math.max(1, sessionsRun(stack)))
    const journals = async (stack: SpawnedStack): Promise<RunJournal[]> => Promise.all((warmedUp.get(stack) ?? []).slice(0, CENSUS_SESSIONS).map(id => runJournal(stack.adminUrl, id)))
    const census = { current: await journals(current), baseline: await journals(baseline) }
    const batches = [...records.values()].flatMap(kept => [...kept.batches.values()].flat())
    addFigures(samples, census, sizes, report)
    report.figures.push(
      single(SECTION, `Restate invoker tasks per ${sizes.writeLines + 1}-turn run through the gateway: current`, 'tasks', tasksPerRun[0] ?? NaN, { ratio: { value: (tasksPerRun[0] ?? NaN) / (tasksPerRun[1] ?? NaN), to: 'Nov 30' } }),
      single(SECTION, `Restate invoker tasks per ${sizes.writeLines + 1}-turn run through the gateway: ${BASELINE_LABEL}`, 'tasks', tasksPerRun[1] ?? NaN),
    )
    report.notes.push(`§${SECTION} Current (${source.label}) against ${BASELINE_LABEL}: both stacks started by their own scripts/start.ts (demo model, one API key, per-key limits lifted), checkout ${checkout.reused ? 'reused' : 'made'} in ${checkout.folder}; ${sizes.rounds} measured rounds after ${sizes.warmupRounds} warm-up, each a batch of ${sizes.sessions} at once and ${sizes.sessions} arriving at ${sizes.pacedPerMinute}/min on each stack, order rotated per round. Run latency at the fixed rate, p50: current ${latency(records.get(current), names.current.paced)} ms, Nov 30 ${latency(records.get(baseline), names.baseline.paced)} ms. File-tool worker processes (Node, not the sandbox around them) seen per batch of ${sizes.sessions} (sampled every 200 ms, a lower bound; the Nov 30 commit has none): current at once ${workersSeen(records.get(current), names.current.burst)}, at the fixed rate ${workersSeen(records.get(current), names.current.paced)}. Invocations keyed by a warm-up session and their journal entries in all: current ${describe(census.current)}, Nov 30 ${describe(census.baseline)}. Failures: ${[...new Set(batches.flatMap(batch => batch.failures))].join(', ') || 'none'}. Section time ${((performance.now() - started) / 1000).toFixed(0)} s.`)
  } finally {
    for (const stack of stacks.reverse()) await stack.stop()
  }
}

/** The probe names of both stacks. */
function namesOf(sizes: BenchOptions['baseline']): Record<'current' | 'baseline', { burst: string; paced: string }> {
  const burst = `${sizes.sessions} sessions × ${sizes.writeLines + 1} turns at once`
  const paced = `${sizes.sessions} sessions arriving at ${sizes.pacedPerMinute}/min`
  return { current: { burst: `${burst}: current`, paced: `${paced}: current` }, baseline: { burst: `${burst}: ${BASELINE_LABEL}`, paced: `${paced}: ${BASELINE_LABEL}` } }
}

function latency(records: StackRecords | undefined, name: string): string {
  return quantile((records?.batches.get(name) ?? []).flatMap(batch => batch.runMs), 0.5).toFixed(0)
}

function workersSeen(records: StackRecords | undefined, name: string): string {
  return (records?.workers.get(name) ?? []).join(', ') || 'none'
}

function describe(journals: readonly RunJournal[]): string {
  return journals.map(journal => `${journal.invocations} invocations, ${journal.allEntries} entries`).join('; ')
}

function addFigures(samples: Map<string, number[][]>, census: Record<'current' | 'baseline', RunJournal[]>, sizes: BenchOptions['baseline'], report: Report): void {
  const names = namesOf(sizes)
  const entries = (of: readonly RunJournal[]): number => quantile(of.map(journal => journal.entries), 0.5)
  const pair = (kind: 'burst' | 'paced'): void => {
    const ratio = summarize(paired(samples, names.current[kind], names.baseline[kind], (current, baseline) => current / baseline))
    report.figures.push(
      figureOf(SECTION, names.current[kind], 'sessions/min', summarize(flat(samples, names.current[kind])), { ratio: { value: ratio.median, to: 'Nov 30' } }),
      figureOf(SECTION, names.baseline[kind], 'sessions/min', summarize(flat(samples, names.baseline[kind]))),
      figureOf(SECTION, `current ÷ Nov 30, ${kind === 'burst' ? 'at once' : `arriving at ${sizes.pacedPerMinute}/min`}`, '×', ratio, { target: { text: '≥ 1.0×', met: ratio.median >= 1 } }),
    )
  }
  pair('burst')
  pair('paced')
  const current = entries(census.current)
  const baseline = entries(census.baseline)
  report.figures.push(
    single(SECTION, `journal entries per ${sizes.writeLines + 1}-turn run (session/run): current`, 'entries', current, { ratio: { value: current / baseline, to: 'Nov 30' }, target: { text: '≤ 85', met: current <= 85 } }),
    single(SECTION, `journal entries per ${sizes.writeLines + 1}-turn run (session/run): ${BASELINE_LABEL}`, 'entries', baseline),
  )
}

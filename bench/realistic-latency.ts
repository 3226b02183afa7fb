import { journalCensus } from './lib/journal'
import { flat, interleave, paired } from './lib/interleave'
import type { Probe } from './lib/interleave'
import type { BenchOptions } from './lib/options'
import { figureOf, single } from './lib/report'
import type { Report } from './lib/report'
import type { BenchServer } from './lib/restate-server'
import type { ScriptedRunShape } from './lib/scripted-run'
import { sleepMs, summarize } from './lib/stats'
import { bareRoundTripMs, commitProbe, defaultVariant, restateVariant, sqliteVariant } from './lib/variants'
import type { Variant } from './lib/variants'
import { sqliteUnfoldedVariant } from './lib/sqlite-commit-count'

/**
 * Section 3: the scripted run with a 20 ms model turn on the default runtime, SQLite and Restate, interleaved, plus a
 * bare `ctx.run` round-trip probe per round. Restate's floor is its journal round trips per turn × that round trip.
 */
export async function measureRealisticLatency(server: BenchServer, options: BenchOptions, report: Report): Promise<void> {
  const shape: ScriptedRunShape = { toolTurns: options.realistic.toolTurns, modelDelayMs: options.realistic.modelDelayMs }
  const variants: Variant[] = [defaultVariant(), sqliteVariant('FULL'), sqliteVariant('NORMAL'), restateVariant('restate', server, 'BenchAgent'), sqliteUnfoldedVariant()]
  const commits = commitProbe()
  let lastInvocation = ''
  try {
    const probes: Probe[] = [
      ...variants.map(variant => ({
        name: variant.name,
        async measure() {
          const run = await variant.runOnce(shape)
          if (run.invocationId) lastInvocation = run.invocationId
          return run.wallMs / run.turns
        },
      })),
      { name: 'bare round trip', measure: async () => bareRoundTripMs(server, options.realistic.bareSteps) },
      { name: 'idle commit', measure: async () => idleCommits(commits, shape.modelDelayMs, 10) },
    ]
    const samples = await interleave(probes, options.realistic.warmupRounds, options.realistic.rounds)
    const census = await journalCensus(server, lastInvocation)
    addFigures(samples, census.runCommands / (shape.toolTurns + 1), shape, report)
  } finally {
    commits.close()
    for (const variant of variants) variant.close?.()
  }
}

/** FULL commits each made after `idleMs` without disk writes, as a step after a model call is. */
async function idleCommits(commits: ReturnType<typeof commitProbe>, idleMs: number, count: number): Promise<number[]> {
  const latencies: number[] = []
  for (let index = 0; index < count; index++) {
    await sleepMs(idleMs)
    latencies.push(...commits.commits(1))
  }
  return latencies
}

function addFigures(samples: Map<string, number[][]>, roundTripsPerTurn: number, shape: ScriptedRunShape, report: Report): void {
  const overheadPercent = (name: string) => summarize(paired(samples, name, 'default', (variant, base) => (100 * (variant - base)) / base))
  const floor = summarize(flat(samples, 'default'))
  const bare = summarize(flat(samples, 'bare round trip'))
  const full = overheadPercent('sqlite FULL')
  const restateFloorPercent = (100 * roundTripsPerTurn * bare.median) / floor.median
  const minimumFloorPercent = (100 * 2 * bare.median) / floor.median
  const idle = summarize(flat(samples, 'idle commit'))
  // One synced commit per turn: tool results fold into the next model step's commit.
  const sqliteFloorPercent = (100 * idle.median) / floor.median
  report.figures.push(
    figureOf(3, `default runtime, ${shape.modelDelayMs} ms model turn, ${shape.toolTurns + 1} turns`, 'ms/turn', floor),
    figureOf(3, 'sqlite FULL overhead at 20 ms/turn', '%', full, { target: { text: '≤ 3 % (seed 4.8 %)', met: full.median <= 3 }, note: `floor ${sqliteFloorPercent.toFixed(1)} %` }),
    single(3, 'sqlite FULL floor: 1 commit/turn after 20 ms idle', '%', sqliteFloorPercent),
    figureOf(3, 'sqlite FULL, fold off (each tool result committed at once), overhead at 20 ms/turn', '%', overheadPercent('sqlite FULL, fold off')),
    figureOf(3, 'bare FULL commit after 20 ms idle', 'ms', idle),
    figureOf(3, 'sqlite NORMAL overhead at 20 ms/turn', '%', overheadPercent('sqlite NORMAL')),
    figureOf(3, 'restate overhead at 20 ms/turn', '%', overheadPercent('restate'), { note: `floor ${restateFloorPercent.toFixed(1)} %` }),
    single(3, `restate floor: ${roundTripsPerTurn.toFixed(2)} round trips/turn × bare ctx.run`, '%', restateFloorPercent, { note: `2 round trips/turn minimum: ${minimumFloorPercent.toFixed(1)} %` }),
    figureOf(3, 'bare ctx.run round trip (same server)', 'ms', bare),
  )
  report.notes.push(`§3 A synchronous=FULL commit after ${shape.modelDelayMs} ms without writes costs ${idle.median.toFixed(2)} ms median (p95 ${idle.p95.toFixed(2)}), against ${'~'}0.2–0.3 ms back to back: the virtual disk is slower to sync when idle, so at realistic model latency SQLite's one synced commit per turn costs ${sqliteFloorPercent.toFixed(1)} % of the turn before any loop overhead.`)
  report.notes.push(`§3 Restate floor = ${roundTripsPerTurn.toFixed(2)} journal round trips per turn (counted in sys_journal) × ${bare.median.toFixed(3)} ms bare ctx.run = ${(roundTripsPerTurn * bare.median).toFixed(2)} ms/turn = ${restateFloorPercent.toFixed(1)} % of a ${floor.median.toFixed(2)} ms turn; with the minimum 2 round trips/turn (model + tool) it would be ${minimumFloorPercent.toFixed(1)} %.`)
}

import { describeKinds, journalCensus } from './lib/journal'
import type { JournalCensus } from './lib/journal'
import { flat, interleave, paired } from './lib/interleave'
import type { Probe } from './lib/interleave'
import type { BenchOptions } from './lib/options'
import { figureOf, single } from './lib/report'
import type { Report } from './lib/report'
import type { BenchServer } from './lib/restate-server'
import { summarize } from './lib/stats'
import type { ScriptedRunShape } from './lib/scripted-run'
import { commitProbe, defaultVariant, restateVariant, sqliteVariant } from './lib/variants'
import type { Variant } from './lib/variants'

const perTurn = (variant: Variant, shape: ScriptedRunShape, invocations?: string[]): Probe => ({
  name: variant.name,
  async measure() {
    const run = await variant.runOnce(shape)
    if (run.invocationId) invocations?.push(run.invocationId)
    return run.wallMs / run.turns
  },
})

/**
 * Sections 1 and 2: the instant-model run on the default runtime, SQLite (FULL, NORMAL), our Restate runtime and the
 * hand-written Restate loop, interleaved round by round, with a bare SQLite commit loop in every round.
 */
export async function measureDurabilityOverhead(server: BenchServer, options: BenchOptions, report: Report): Promise<void> {
  const shape: ScriptedRunShape = { toolTurns: options.instant.toolTurns, modelDelayMs: 0 }
  const variants = [defaultVariant(), sqliteVariant('FULL'), sqliteVariant('NORMAL'), restateVariant('restate', server, 'BenchAgent'), restateVariant('restate hand-written', server, 'HandLoop'),
    restateVariant('restate coalesce', server, 'BenchAgent', { coalesce: true }), restateVariant('restate memory session', server, 'BenchAgent', { memorySession: true })]
  const commits = commitProbe()
  const invocations = { ours: [] as string[], hand: [] as string[] }
  try {
    const probes: Probe[] = [
      ...variants.map(variant => perTurn(variant, shape, variant.name === 'restate' ? invocations.ours : variant.name === 'restate hand-written' ? invocations.hand : undefined)),
      { name: 'commit', measure: async () => commits.commits(options.instant.commitsPerRound) },
    ]
    const samples = await interleave(probes, options.instant.warmupRounds, options.instant.rounds)
    addSectionOne(samples, shape, report)
    const census = { ours: await journalCensus(server, invocations.ours.at(-1) ?? ''), hand: await journalCensus(server, invocations.hand.at(-1) ?? '') }
    addSectionTwo(samples, census, shape.toolTurns + 1, report)
  } finally {
    commits.close()
    for (const variant of variants) variant.close?.()
  }
}

function addSectionOne(samples: Map<string, number[][]>, shape: ScriptedRunShape, report: Report): void {
  const floor = summarize(flat(samples, 'default'))
  const commit = summarize(flat(samples, 'commit'))
  const twoCommits = 2 * commit.median
  const overhead = (name: string): number => summarize(paired(samples, name, 'default', (variant, base) => variant - base)).median
  const ratio = (name: string): { value: number; to: string } => ({ value: summarize(paired(samples, name, 'default', (variant, base) => variant / base)).median, to: 'default' })
  const full = overhead('sqlite FULL')
  const normal = overhead('sqlite NORMAL')
  report.figures.push(
    figureOf(1, `default runtime (floor), ${shape.toolTurns + 1} turns`, 'ms/turn', floor, { ratio: { value: 1, to: 'default' } }),
    figureOf(1, 'sqlite FULL', 'ms/turn', summarize(flat(samples, 'sqlite FULL')), { ratio: ratio('sqlite FULL'), target: { text: `overhead ${full.toFixed(3)} ≤ 1.25×2 commits (${(1.25 * twoCommits).toFixed(3)}); seed 0.36 ms/turn`, met: full <= 1.25 * twoCommits } }),
    figureOf(1, 'sqlite NORMAL', 'ms/turn', summarize(flat(samples, 'sqlite NORMAL')), { ratio: ratio('sqlite NORMAL'), target: { text: `overhead ${normal.toFixed(3)} ≤ 0.05 ms/turn`, met: normal <= 0.05 } }),
    figureOf(1, 'restate (local server)', 'ms/turn', summarize(flat(samples, 'restate')), { ratio: ratio('restate') }),
    figureOf(1, 'sqlite bare commit, synchronous=FULL', 'ms', commit, { note: 'BEGIN IMMEDIATE; INSERT; COMMIT on a WAL file in the same tmp folder' }),
    single(1, 'floor of 2 FULL commits per turn', 'ms/turn', twoCommits),
  )
}

function addSectionTwo(samples: Map<string, number[][]>, census: { ours: JournalCensus; hand: JournalCensus }, turns: number, report: Report): void {
  const ratio = summarize(paired(samples, 'restate', 'restate hand-written', (ours, hand) => ours / hand))
  const toHand = (name: string): { value: number; to: string } => ({ value: summarize(paired(samples, name, 'restate hand-written', (ours, hand) => ours / hand)).median, to: 'hand-written' })
  report.figures.push(
    figureOf(2, 'restate hand-written loop (ctx.run per model/tool call)', 'ms/turn', summarize(flat(samples, 'restate hand-written'))),
    figureOf(2, 'restate runtime ÷ hand-written loop', '×', ratio, { target: { text: '≤ 1.1×', met: ratio.median <= 1.1 } }),
    figureOf(2, 'diagnostic: restate, coalesce: true (fewer ctx.date.now)', 'ms/turn', summarize(flat(samples, 'restate coalesce')), { ratio: toHand('restate coalesce') }),
    figureOf(2, 'diagnostic: restate, session in memory (no SetState)', 'ms/turn', summarize(flat(samples, 'restate memory session')), { ratio: toHand('restate memory session') }),
    single(2, 'journal entries per turn: ours', 'entries', census.ours.entries / turns, { ratio: { value: census.ours.entries / census.hand.entries, to: 'hand-written' } }),
    single(2, 'journal entries per turn: hand-written', 'entries', census.hand.entries / turns),
    single(2, 'ctx.run round trips per turn: ours', 'round trips', census.ours.runCommands / turns, { ratio: { value: census.ours.runCommands / census.hand.runCommands, to: 'hand-written' } }),
    single(2, 'journal bytes per run: ours', 'KiB', census.ours.bytes / 1024, { ratio: { value: census.ours.bytes / census.hand.bytes, to: 'hand-written' } }),
  )
  report.notes.push(
    `§2 journal of one ${turns}-turn run, ours (${census.ours.entries} entries, ${census.ours.runCommands} round trips): ${describeKinds(census.ours)}`,
    `§2 journal of the same run, hand-written (${census.hand.entries} entries, ${census.hand.runCommands} round trips): ${describeKinds(census.hand)}`,
  )
}

import { describeKinds, journalCensus } from './lib/journal'
import type { JournalCensus } from './lib/journal'
import { flat, interleave, paired } from './lib/interleave'
import type { Probe } from './lib/interleave'
import type { BenchOptions } from './lib/options'
import { figureOf, single } from './lib/report'
import type { Report } from './lib/report'
import type { BenchServer } from './lib/restate-server'
import { summarize } from './lib/stats'
import type { Summary } from './lib/stats'
import type { ScriptedRunShape } from './lib/scripted-run'
import { countSqliteCommits, sqliteUnfoldedVariant } from './lib/sqlite-commit-count'
import type { CommitsPerTurn } from './lib/sqlite-commit-count'
import { commitProbe, defaultVariant, restateVariant, sqliteVariant } from './lib/variants'
import { useBenchDoorbell } from './lib/restate-services'
import { PEER_AGENT } from './lib/peer-agent'
import { addPeerFigures, PEER_VARIANT } from './peer-figures'
import type { Variant } from './lib/variants'

/**
 * What a probe remembers of its runs: invocation ids (for the journal census), event-log counts, and for a variant
 * with timed steps the split of each run: ms per turn spent between steps, ms per step round trip.
 */
interface RunRecords { invocations: string[]; events: number[]; betweenSteps: number[]; perStep: number[] }

const emptyRecords = (): RunRecords => ({ invocations: [], events: [], betweenSteps: [], perStep: [] })

const perTurn = (variant: Variant, shape: ScriptedRunShape, records?: RunRecords): Probe => ({
  name: variant.name,
  async measure() {
    const run = await variant.runOnce(shape)
    if (run.invocationId) records?.invocations.push(run.invocationId)
    if (run.events !== undefined) records?.events.push(run.events)
    if (run.stepWaitMs !== undefined && run.steps) {
      records?.betweenSteps.push((run.wallMs - run.stepWaitMs) / run.turns)
      records?.perStep.push(run.stepWaitMs / run.steps)
    }
    return run.wallMs / run.turns
  },
})

/** Diagnostics that split the gap to the hand-written loop: its state layout alone, and each loop's time between steps. */
const SPLIT = { handState: 'restate hand-written + session state writes', oursTimed: 'restate, steps timed', handTimed: 'restate hand-written, steps timed' } as const

/**
 * The §2 variants whose journal is counted: ours, the hand-written loop, ours with the deployment's event log (derived
 * from the session's state), and ours with the alternative it was chosen over (a journaled append per turn boundary).
 */
const CENSUSED = { ours: 'restate', hand: 'restate hand-written', logged: 'restate + event log', turnSends: 'restate + event log by turn sends', safe: 'restate, safe tool' } as const
/** The other variant with the deployment's event log (and its doorbell): the logged run with no at-most-once guard of unsafe calls. */
const RUNG_TOO = 'restate + event log without intents'
type Censuses = Record<keyof typeof CENSUSED, JournalCensus>

/**
 * Sections 1 and 2: the instant-model run on the default runtime, SQLite (FULL, NORMAL), our Restate runtime (alone
 * and with the deployment's event log) and the hand-written Restate loop, interleaved round by round, with a bare
 * SQLite commit loop in every round.
 */
export async function measureDurabilityOverhead(server: BenchServer, options: BenchOptions, report: Report): Promise<void> {
  const shape: ScriptedRunShape = { toolTurns: options.instant.toolTurns, modelDelayMs: 0 }
  const doorbell = useBenchDoorbell(server.ingressUrl)
  const callsBefore = doorbell.calls()
  const variants = [defaultVariant(), sqliteVariant('FULL'), sqliteVariant('NORMAL'), restateVariant(CENSUSED.ours, server, 'BenchAgent'), restateVariant(CENSUSED.hand, server, 'HandLoop'), restateVariant(PEER_VARIANT, server, PEER_AGENT),
    restateVariant(CENSUSED.logged, server, 'BenchAgent', { eventLog: 'derived' }), restateVariant(CENSUSED.turnSends, server, 'BenchAgent', { eventLog: 'turn-sends' }),
    restateVariant('restate coalesce', server, 'BenchAgent', { coalesce: true }), restateVariant('restate memory session', server, 'BenchAgent', { memorySession: true }),
    restateVariant('restate without intents', server, 'BenchAgent', { withoutIntents: true }),
    restateVariant(CENSUSED.safe, server, 'BenchAgent', { replaySafe: true }),
    restateVariant('restate + event log without doorbell', server, 'BenchAgent', { eventLog: 'derived', withoutDoorbell: true }),
    restateVariant(RUNG_TOO, server, 'BenchAgent', { eventLog: 'derived', withoutIntents: true }),
    restateVariant(SPLIT.handState, server, 'HandLoop', { sessionWrites: true }), restateVariant(SPLIT.oursTimed, server, 'BenchAgent', { timeSteps: true }),
    restateVariant(SPLIT.handTimed, server, 'HandLoop', { timeSteps: true }), sqliteUnfoldedVariant()]
  const commits = commitProbe()
  const records = new Map<string, RunRecords>([...Object.values(CENSUSED), PEER_VARIANT, RUNG_TOO, SPLIT.oursTimed, SPLIT.handTimed].map(name => [name, emptyRecords()]))
  try {
    const probes: Probe[] = [
      ...variants.map(variant => perTurn(variant, shape, records.get(variant.name))),
      { name: 'commit', measure: async () => commits.commits(options.instant.commitsPerRound) },
    ]
    const samples = await interleave(probes, options.instant.warmupRounds, options.instant.rounds)
    addSectionOne(samples, shape, { folded: await countSqliteCommits(shape), unfolded: await countSqliteCommits(shape, { foldToolResults: false }) }, report)
    const censusOf = async (name: string): Promise<JournalCensus> => journalCensus(server, records.get(name)?.invocations.at(-1) ?? '')
    const census: Censuses = { ours: await censusOf(CENSUSED.ours), hand: await censusOf(CENSUSED.hand), logged: await censusOf(CENSUSED.logged), turnSends: await censusOf(CENSUSED.turnSends), safe: await censusOf(CENSUSED.safe) }
    addSectionTwo(samples, census, shape.toolTurns + 1, report)
    addPeerFigures(samples, CENSUSED, { ...census, peer: await censusOf(PEER_VARIANT) }, shape.toolTurns + 1, report)
    // Both variants with the deployment's event log ring the one doorbell: its calls are shared by their runs.
    const rungRuns = (records.get(CENSUSED.logged)?.events.length ?? 0) + (records.get(RUNG_TOO)?.events.length ?? 0)
    addEventLogFigures(census, records.get(CENSUSED.logged)?.events ?? [], { calls: doorbell.calls() - callsBefore, runs: rungRuns }, shape.toolTurns + 1, report)
    addSplitFigures(samples, records, options.instant.warmupRounds, report)
  } finally {
    commits.close()
    for (const variant of variants) variant.close?.()
  }
}

/**
 * Section 1's rows. The SQLite FULL target: its ms per turn within 1.25× of the floor of one FULL commit per turn plus
 * the default runtime's ms per turn; commits per turn (counted with the runtime's `onCommit` hook in one more run,
 * set-up and release included) beside it, and the same runtime with the fold off (each tool result committed at once).
 */
function addSectionOne(samples: Map<string, number[][]>, shape: ScriptedRunShape, commitsPerTurn: { folded: CommitsPerTurn; unfolded: CommitsPerTurn }, report: Report): void {
  const floor = summarize(flat(samples, 'default'))
  const commit = summarize(flat(samples, 'commit'))
  const oneCommitFloor = commit.median + floor.median
  const overhead = (name: string): number => summarize(paired(samples, name, 'default', (variant, base) => variant - base)).median
  const ratio = (name: string): { value: number; to: string } => ({ value: summarize(paired(samples, name, 'default', (variant, base) => variant / base)).median, to: 'default' })
  const fullSummary = summarize(flat(samples, 'sqlite FULL'))
  const normal = overhead('sqlite NORMAL')
  const commitsText = (counted: CommitsPerTurn): string => `${counted.synced.toFixed(2)} synced + ${counted.unsynced.toFixed(2)} unsynced commits/turn`
  report.figures.push(
    figureOf(1, `default runtime (floor), ${shape.toolTurns + 1} turns`, 'ms/turn', floor, { ratio: { value: 1, to: 'default' } }),
    figureOf(1, 'sqlite FULL', 'ms/turn', fullSummary, { ratio: ratio('sqlite FULL'), note: commitsText(commitsPerTurn.folded), target: { text: `${fullSummary.median.toFixed(3)} ≤ 1.25×(1 FULL commit + default) = ${(1.25 * oneCommitFloor).toFixed(3)}; overhead ${overhead('sqlite FULL').toFixed(3)}`, met: fullSummary.median <= 1.25 * oneCommitFloor } }),
    figureOf(1, 'sqlite FULL, fold off (each tool result committed at once)', 'ms/turn', summarize(flat(samples, 'sqlite FULL, fold off')), { ratio: ratio('sqlite FULL, fold off'), note: commitsText(commitsPerTurn.unfolded) }),
    single(1, 'sqlite FULL synced commits per turn', 'commits', commitsPerTurn.folded.synced, { note: `${commitsPerTurn.folded.unsynced.toFixed(2)} unsynced beside them; whole run, set-up and release included`, target: { text: '≤ 1.1 (one per turn)', met: commitsPerTurn.folded.synced <= 1.1 } }),
    figureOf(1, 'sqlite NORMAL', 'ms/turn', summarize(flat(samples, 'sqlite NORMAL')), { ratio: ratio('sqlite NORMAL'), target: { text: `overhead ${normal.toFixed(3)} ≤ 0.05 ms/turn`, met: normal <= 0.05 } }),
    figureOf(1, 'restate (local server)', 'ms/turn', summarize(flat(samples, 'restate')), { ratio: ratio('restate') }),
    figureOf(1, 'sqlite bare commit, synchronous=FULL', 'ms', commit, { note: 'BEGIN IMMEDIATE; INSERT; COMMIT on a WAL file in the same tmp folder' }),
    single(1, 'floor of 1 FULL commit per turn + default runtime', 'ms/turn', oneCommitFloor),
  )
}

function addSectionTwo(samples: Map<string, number[][]>, census: Censuses, turns: number, report: Report): void {
  const toHandSamples = (name: string): number[] => paired(samples, name, CENSUSED.hand, (ours, hand) => ours / hand)
  const ratio = summarize(toHandSamples(CENSUSED.ours))
  const logged = summarize(toHandSamples(CENSUSED.logged))
  const toHand = (name: string): { value: number; to: string } => ({ value: summarize(toHandSamples(name)).median, to: 'hand-written' })
  const perTurnOf = (kind: keyof Censuses): number => census[kind].entries / turns
  report.figures.push(
    figureOf(2, 'restate hand-written loop (ctx.run per model/tool call)', 'ms/turn', summarize(flat(samples, CENSUSED.hand))),
    figureOf(2, 'restate runtime ÷ hand-written loop', '×', ratio, { target: { text: '≤ 1.1×', met: ratio.median <= 1.1 } }),
    figureOf(2, 'restate runtime + event log ÷ hand-written loop', '×', logged, { target: { text: '≤ 1.15×', met: logged.median <= 1.15 } }),
    figureOf(2, 'restate runtime + event log (derived from the session state, as the deployment)', 'ms/turn', summarize(flat(samples, CENSUSED.logged)), { ratio: toHand(CENSUSED.logged) }),
    figureOf(2, 'alternative: event log by a journaled append per turn boundary', 'ms/turn', summarize(flat(samples, CENSUSED.turnSends)), { ratio: toHand(CENSUSED.turnSends) }),
    figureOf(2, 'diagnostic: derived event log without the doorbell (the run\'s journaled sync only)', 'ms/turn', summarize(flat(samples, 'restate + event log without doorbell')), { ratio: toHand('restate + event log without doorbell') }),
    figureOf(2, 'diagnostic: restate + event log with no at-most-once guard of unsafe calls (stepIntents: false: no intent, no anchor)', 'ms/turn', summarize(flat(samples, RUNG_TOO)), { ratio: toHand(RUNG_TOO) }),
    figureOf(2, 'restate runtime + event log ÷ restate runtime alone (what the event log adds)', '×', summarize(paired(samples, CENSUSED.logged, CENSUSED.ours, (logged, ours) => logged / ours))),
    figureOf(2, 'alternative ÷ restate runtime alone (what journaled sends per turn boundary add)', '×', summarize(paired(samples, CENSUSED.turnSends, CENSUSED.ours, (sends, ours) => sends / ours))),
    figureOf(2, 'diagnostic: restate, coalesce: true (fewer ctx.date.now)', 'ms/turn', summarize(flat(samples, 'restate coalesce')), { ratio: toHand('restate coalesce') }),
    figureOf(2, 'diagnostic: restate, session in memory (no SetState)', 'ms/turn', summarize(flat(samples, 'restate memory session')), { ratio: toHand('restate memory session') }),
    figureOf(2, 'diagnostic: restate with no at-most-once guard of unsafe calls (stepIntents: false: no intent, no anchor)', 'ms/turn', summarize(flat(samples, 'restate without intents')), { ratio: toHand('restate without intents'), note: `the guard (anchors; an intent after an approval) costs ${summarize(paired(samples, 'restate', 'restate without intents', (base, variant) => base - variant)).median.toFixed(3)} ms/turn (one unsafe call per turn)` }),
    single(2, 'journal entries per turn: ours', 'entries', perTurnOf('ours'), { ratio: { value: census.ours.entries / census.hand.entries, to: 'hand-written' } }),
    single(2, 'journal entries per turn: ours + event log', 'entries', perTurnOf('logged'), { ratio: { value: census.logged.entries / census.hand.entries, to: 'hand-written' }, note: `${(perTurnOf('logged') - perTurnOf('ours')).toFixed(2)} over ours` }),
    single(2, 'journal entries per turn: ours + event log by turn sends (alternative)', 'entries', perTurnOf('turnSends'), { ratio: { value: census.turnSends.entries / census.hand.entries, to: 'hand-written' }, note: `${(perTurnOf('turnSends') - perTurnOf('ours')).toFixed(2)} over ours` }),
    single(2, 'journal entries per turn: hand-written', 'entries', perTurnOf('hand')),
    single(2, 'ctx.run round trips per turn: ours', 'round trips', census.ours.runCommands / turns, { ratio: { value: census.ours.runCommands / census.hand.runCommands, to: 'hand-written' } }),
    figureOf(2, 'restate runtime, the tool replay: safe (its calls ride on the next model step)', 'ms/turn', summarize(flat(samples, CENSUSED.safe)), { ratio: toHand(CENSUSED.safe) }),
    single(2, 'ctx.run round trips per turn: ours, tool turns of safe calls', 'round trips', census.safe.runCommands / turns, { ratio: { value: census.safe.runCommands / census.hand.runCommands, to: 'hand-written' }, target: { text: '1 per turn (hand-written and peer: 2)', met: census.safe.runCommands / turns <= 1.1 } }),
    single(2, 'journal entries per turn: ours, tool turns of safe calls', 'entries', census.safe.entries / turns, { ratio: { value: census.safe.entries / census.hand.entries, to: 'hand-written' } }),
    single(2, 'journal bytes per run: ours', 'KiB', census.ours.bytes / 1024, { ratio: { value: census.ours.bytes / census.hand.bytes, to: 'hand-written' } }),
    single(2, 'journal bytes per run: ours + event log', 'KiB', census.logged.bytes / 1024, { ratio: { value: census.logged.bytes / census.hand.bytes, to: 'hand-written' } }),
  )
  report.notes.push(
    `§2 journal of one ${turns}-turn run, ours (${census.ours.entries} entries, ${census.ours.runCommands} round trips): ${describeKinds(census.ours)}`,
    `§2 journal of the same run, hand-written (${census.hand.entries} entries, ${census.hand.runCommands} round trips): ${describeKinds(census.hand)}`,
    `§2 journal of the same run, ours + event log (${census.logged.entries} entries, ${census.logged.runCommands} round trips): ${describeKinds(census.logged)}`,
    `§2 journal of the same run, ours + event log by turn sends (${census.turnSends.entries} entries, ${census.turnSends.runCommands} round trips): ${describeKinds(census.turnSends)}`,
  )
}

/**
 * The event log's side of the logged variants: the derived log's journaled syncs and doorbell calls per turn (a sync
 * that reads the session is two invocations, the log's `sync` and the session's shared `changes`; a doorbell call to a
 * log nobody follows, as here, is one), against the alternative's journaled appends per turn (each one invocation of
 * `events`), and events per run.
 */
function addEventLogFigures(census: Censuses, eventsPerRun: number[], bell: { calls: number; runs: number }, turns: number, report: Report): void {
  const sends = (of: JournalCensus): number => of.kinds.find(kind => kind.label === 'Command: OneWayCall')?.count ?? 0
  const { calls } = bell
  const runs = Math.max(1, bell.runs)
  // Nobody follows these logs: a doorbell call is one invocation (the sync says so and reads nothing), a journaled sync two.
  const derived = (calls / runs + 2 * sends(census.logged)) / turns
  report.figures.push(
    single(2, 'event log: doorbell calls per turn (derived log, outside the journal)', 'calls', calls / (runs * turns), { note: `${calls} calls over ${bell.runs} runs` }),
    single(2, 'event log: journaled syncs per turn (derived log)', 'sends', sends(census.logged) / turns, { note: `${sends(census.logged)} journaled sync calls, ${eventsPerRun.at(-1) ?? 0} events per run` }),
    single(2, 'event log: invocations per turn (derived log, nobody following)', 'invocations', derived),
    single(2, 'event log: journaled appends per turn = invocations per turn (alternative: turn sends)', 'sends', sends(census.turnSends) / turns),
  )
  if (new Set(eventsPerRun).size > 1) report.notes.push(`§2 event log counts differ between runs: ${eventsPerRun.join(', ')}`)
}

/**
 * Where the gap to the hand-written loop lies: the hand-written loop doing our session store's state writes (the
 * cost of the layout alone), and, with every step round trip timed from its call to its result, the time each loop
 * spends between steps (its own work on the critical path) and per round trip (the server, the closure, the SDK).
 */
function addSplitFigures(samples: Map<string, number[][]>, records: Map<string, RunRecords>, warmupRounds: number, report: Report): void {
  const toHand = paired(samples, SPLIT.handState, CENSUSED.hand, (state, hand) => state / hand)
  // The probes record every round; the warm-up rounds are left out, as `interleave` leaves them out of the samples.
  const measured = (name: string, pick: (records: RunRecords) => number[]): Summary => summarize(pick(records.get(name) ?? emptyRecords()).slice(warmupRounds))
  report.figures.push(
    figureOf(2, 'diagnostic: hand-written loop + our session state writes (a turn key and the header per turn)', 'ms/turn', summarize(flat(samples, SPLIT.handState)), { ratio: { value: summarize(toHand).median, to: 'hand-written' } }),
    figureOf(2, 'diagnostic: time between steps per turn, ours (steps timed)', 'ms/turn', measured(SPLIT.oursTimed, run => run.betweenSteps)),
    figureOf(2, 'diagnostic: time between steps per turn, hand-written (steps timed)', 'ms/turn', measured(SPLIT.handTimed, run => run.betweenSteps)),
    figureOf(2, 'diagnostic: step round trip, call to result, ours', 'ms', measured(SPLIT.oursTimed, run => run.perStep)),
    figureOf(2, 'diagnostic: step round trip, call to result, hand-written', 'ms', measured(SPLIT.handTimed, run => run.perStep)),
  )
}

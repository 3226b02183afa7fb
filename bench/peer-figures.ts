import { describeKinds } from './lib/journal'
import type { JournalCensus } from './lib/journal'
import { flat, paired } from './lib/interleave'
import { figureOf, single } from './lib/report'
import type { Report } from './lib/report'
import { summarize } from './lib/stats'

/** The §2 variant of the peer a user would pick: AI SDK 7 with `@restatedev/vercel-ai-middleware` on the same server. */
export const PEER_VARIANT = 'peer: AI SDK + restate middleware'

/** The §2 variants the peer is compared with, by their probe names. */
export interface PeerComparison { ours: string; hand: string }

/** The journals of one run of each: ours, the hand-written loop, and the peer. */
export interface PeerCensuses { ours: JournalCensus; hand: JournalCensus; peer: JournalCensus }

/**
 * The peer's figures in §2: its ms per turn, ours and the hand-written loop's ratios to it (medians of per-round
 * ratios, target ≤ 0.9× for ours), and its journal entries per turn and bytes per run from the same census.
 */
export function addPeerFigures(samples: Map<string, number[][]>, names: PeerComparison, census: PeerCensuses, turns: number, report: Report): void {
  const toPeer = (name: string) => summarize(paired(samples, name, PEER_VARIANT, (variant, peer) => variant / peer))
  const ours = toPeer(names.ours)
  report.figures.push(
    figureOf(2, `${PEER_VARIANT} (generateText, durableCalls, tool in ctx.run)`, 'ms/turn', summarize(flat(samples, PEER_VARIANT))),
    figureOf(2, 'restate runtime ÷ peer (AI SDK + restate middleware)', '×', ours, { target: { text: '≤ 0.9×', met: ours.median <= 0.9 } }),
    figureOf(2, 'restate hand-written loop ÷ peer', '×', toPeer(names.hand)),
    single(2, 'journal entries per turn: peer', 'entries', census.peer.entries / turns, { ratio: { value: census.ours.entries / census.peer.entries, to: 'ours ÷ peer' } }),
    single(2, 'ctx.run round trips per turn: peer', 'round trips', census.peer.runCommands / turns),
    single(2, 'journal bytes per run: peer', 'KiB', census.peer.bytes / 1024, { ratio: { value: census.ours.bytes / census.peer.bytes, to: 'ours ÷ peer' }, note: `hand-written ${(census.hand.bytes / 1024).toFixed(1)} KiB` }),
  )
  report.notes.push(`§2 journal of the same run, peer (${census.peer.entries} entries, ${census.peer.runCommands} round trips): ${describeKinds(census.peer)}`)
}

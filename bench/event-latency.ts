import { cpus, loadavg } from 'node:os'
import { INVOKER_TASKS_COUNTER, invokerTasks } from './lib/invoker-tasks'
import type { EventDoorbell } from '../services/event-log/event-doorbell'
import type { ReadEventsResult, WatchResult } from '../contract/event-log'
import type { BenchOptions } from './lib/options'
import { figureOf, single } from './lib/report'
import type { Report } from './lib/report'
import type { BenchServer } from './lib/restate-server'
import type { BenchRunRequest, BenchRunResult } from './lib/restate-services'
import { useBenchDoorbell } from './lib/restate-services'
import { summarize } from './lib/stats'

const SECTION = 12
/** A viewer gives up on a run whose end has not reached it by then. */
const FOLLOW_TIMEOUT_MS = 60_000

/** A design measured: its event log as the §2 variants name it, and the doorbell's window (the services' default when unset). */
interface Design { name: string; eventLog: BenchRunRequest['eventLog']; windowMs?: number; deployed?: boolean }

/** The two designs, and the deployment's with a narrower doorbell window (what a shorter window buys, and costs). */
const DESIGNS: readonly Design[] = [
  { name: 'derived from the session state (the deployment)', eventLog: 'derived', deployed: true },
  { name: 'derived, doorbell window 10 ms', eventLog: 'derived', windowMs: 10 },
  { name: 'a journaled append per turn boundary (alternative)', eventLog: 'turn-sends' },
]

/** What the viewers of one round saw: each event's latency, the reads that brought events, the invocations. */
interface Seen { latenciesMs: number[]; batches: number; invocations: number; events: number; runs: number; wallMs: number[] }

const emptySeen = (): Seen => ({ latenciesMs: [], batches: 0, invocations: 0, events: 0, runs: 0, wallMs: [] })

/**
 * Follows the log of `key` as the gateway does: a watch parked in Restate (`event_watch/wait`) until the log grows,
 * then one read of what is new. Notes, for each event, the time it reached the viewer minus its `at` (the durable
 * clock at the write that made it: the bench's own clock, the handlers run in this process). Ends at `run:end`.
 */
async function follow(server: BenchServer, key: string, seen: Seen): Promise<void> {
  const deadline = performance.now() + FOLLOW_TIMEOUT_MS
  let latest = 0
  while (performance.now() < deadline) {
    const { body: watched } = await server.call<WatchResult>('event_watch/wait', { key, after: latest, timeoutMs: 30_000 })
    if (watched.count === null || watched.count <= latest) continue
    // The watch carries the events that woke it when they are few (as the gateway takes them); else one read.
    const read = watched.events?.[0]?.seq === latest + 1 ? { events: watched.events } : (await server.call<ReadEventsResult>(`events/${key}/read`, { after: latest, limit: 500 })).body
    const receivedAt = Date.now()
    if (read.events.length > 0) seen.batches += 1
    for (const event of read.events) seen.latenciesMs.push(receivedAt - event.at)
    seen.events += read.events.length
    latest = read.events.at(-1)?.seq ?? latest
    if (read.events.some(event => event.type === 'run:end')) return
  }
  throw new Error(`the viewer of ${key} did not see its run end within ${FOLLOW_TIMEOUT_MS} ms`)
}

/** One round of one design: `sessions` runs at once, each followed by a viewer from before it starts. */
async function round(server: BenchServer, doorbell: EventDoorbell, options: BenchOptions['eventLatency'], eventLog: BenchRunRequest['eventLog'], tag: string, seen: Seen): Promise<void> {
  const keys = Array.from({ length: options.sessions }, (_, index) => `latency-${process.pid}-${tag}-${index}`)
  const before = await invokerTasks(server.metricsUrl)
  const viewers = keys.map(key => follow(server, key, seen))
  const request: BenchRunRequest = { toolTurns: options.toolTurns, modelDelayMs: options.modelDelayMs, ...(eventLog ? { eventLog } : {}) }
  const runs = await Promise.all(keys.map(async key => (await server.call<BenchRunResult>(`BenchAgent/${key}/run`, request)).body))
  await Promise.all(viewers)
  await doorbell.idle()
  // The runs themselves are one invocation each; every other invocation of the round is the event path's.
  seen.invocations += (await invokerTasks(server.metricsUrl)) - before - keys.length
  seen.runs += runs.length
  seen.wallMs.push(...runs.map(run => run.wallMs))
}

/**
 * The bench's doorbell for the next round, with `windowMs` (the services' setting when undefined): the bench runs read
 * the doorbell `useBenchDoorbell` set last, and it takes its window from the services' configuration.
 */
function doorbellOf(server: BenchServer, windowMs: number | undefined): EventDoorbell {
  const saved = process.env.ZIDANE_EVENT_WINDOW_MS
  if (windowMs !== undefined) process.env.ZIDANE_EVENT_WINDOW_MS = String(windowMs)
  try {
    return useBenchDoorbell(server.ingressUrl)
  } finally {
    if (saved === undefined) delete process.env.ZIDANE_EVENT_WINDOW_MS
    else process.env.ZIDANE_EVENT_WINDOW_MS = saved
  }
}

/**
 * Section 12: how soon a turn's durable events reach a viewer, and what that costs, for the deployment's event log
 * (derived from the session's state, woken by the doorbell; and the same with a 10 ms doorbell window) and for the
 * alternative it was chosen over (a journaled append of the events per turn boundary), side by side on the bench server, rounds alternating. In each round
 * `sessions` runs go at once, each followed by a viewer watching and reading its log as the gateway does.
 */
export async function measureEventLatency(server: BenchServer, options: BenchOptions, report: Report): Promise<void> {
  const settings = options.eventLatency
  const seen = new Map<string, Seen>(DESIGNS.map(design => [design.name, emptySeen()]))
  await round(server, doorbellOf(server, undefined), { ...settings, sessions: 2 }, 'derived', 'warm-up', emptySeen())
  for (let index = 0; index < settings.rounds; index++) {
    const order = index % 2 === 0 ? DESIGNS : [...DESIGNS].reverse()
    for (const [number, design] of order.entries()) await round(server, doorbellOf(server, design.windowMs), settings, design.eventLog, `${index}-${number}-${design.eventLog ?? 'none'}`, seen.get(design.name) ?? emptySeen())
  }
  for (const design of DESIGNS) addFigures(report, settings, design.name, seen.get(design.name) ?? emptySeen(), design.deployed === true)
  report.notes.push(`§${SECTION} Durable event latency: ${settings.rounds} rounds per design, alternating; in each, ${settings.sessions} scripted runs at once (${settings.toolTurns} tool turns, ${settings.modelDelayMs} ms model delay per turn) on the bench server, each followed by a viewer from before it starts (event_watch/wait, then events/<key>/read unless the wake carried the events, as the gateway follows a session). A latency is the viewer's receipt minus the event's at (the durable clock of the write that made it, this process's clock). Invocations are the node's ${INVOKER_TASKS_COUNTER} over the round, less the runs. Load average ${loadavg()[0]?.toFixed(1) ?? '?'} on ${cpus().length} cores at the end.`)
}

function addFigures(report: Report, settings: BenchOptions['eventLatency'], name: string, seen: Seen, deployed: boolean): void {
  const latency = summarize(seen.latenciesMs)
  // The target is the deployment's; the alternative's p99 is printed beside it for the comparison.
  const target = { text: `p99 ${latency.p99.toFixed(0)}${deployed ? ' < 100 ms' : ' ms (for comparison)'}`, met: latency.p99 < 100 }
  report.figures.push(
    figureOf(SECTION, `durable event → viewer, ${settings.sessions} sessions at once: ${name}`, 'ms', latency, { target, note: `p99 ${latency.p99.toFixed(1)} ms, ${seen.events} events of ${seen.runs} runs` }),
    single(SECTION, `invocations per event batch reaching a viewer: ${name}`, 'invocations', seen.invocations / Math.max(1, seen.batches), { note: `${seen.invocations} invocations, ${seen.batches} batches, ${(seen.events / Math.max(1, seen.batches)).toFixed(1)} events a batch` }),
    figureOf(SECTION, `run wall time under that load: ${name}`, 'ms', summarize(seen.wallMs)),
  )
}

import { execFileSync } from 'node:child_process'
import { INVOKER_TASKS_COUNTER, invokerTasks } from './lib/invoker-tasks'
import { readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { EVENT_WATCH_SERVICE } from '../contract/event-log'
import { liveReplicasWatchInterface } from '../contract/live-replicas'
import { tenantOf } from '../ingress-gateway/tenancy'
import { freeStackPortsEnv } from '../scripts/stack/free-port'
import { loadStackConfig } from '../scripts/stack/stack-config'
import { openSseViewer } from '../support/sse-client'
import type { SseViewer } from '../support/sse-client'
import { interleave } from './lib/interleave'
import { measureDeploymentAgainstLibrary } from './deployment-against-library'
import { measureOneTurnRun } from './one-turn-run'
import type { OneTurnStack } from './one-turn-run'
import { startKeptStack } from './lib/kept-stack'
import { parseOptions } from './lib/options'
import type { BenchOptions } from './lib/options'
import { figureOf, single } from './lib/report'
import type { Report } from './lib/report'
import { sleepMs, summarize } from './lib/stats'

const API_KEY = 'zk_bench_session_log_key'
const SECTION = 10
const AUTHORIZATION = { authorization: `Bearer ${API_KEY}` }
/** The e2e test's history budget: a long session compacts, so a run loads only the turns after its checkpoint. */
const COMPACT_BUDGET_TOKENS = 3000
/** One key drives every session and viewer: the per-key gateway limits must not shape the measure. */
const STACK_ENV = { GATEWAY_RATE_PER_SECOND: '1000000', GATEWAY_RATE_BURST: '1000000', GATEWAY_MAX_CONCURRENT_RUNS: '1000000', GATEWAY_MAX_EVENT_STREAMS: '1000000', ANTHROPIC_API_KEY: '', LOG_LEVEL: 'warn', ZIDANE_COMPACT_BUDGET_TOKENS: String(COMPACT_BUDGET_TOKENS) }
/** Most `todos:` lines of one growth run (a run of n lines makes 2n + 2 turns); the gateway caps maxTurns at 500. */
const MAX_GROWTH_LINES = 240
/** Four todoread lines: the user turn, four tool calls, their four results and the final turn. */
const TEN_TURN_PROMPT = 'todos:\ntodos:\ntodos:\ntodos:'
/**
 * The header session's prompt: `hello` and about 1.5 KB of filler. With bare `hello` the 3,000-token history budget
 * holds ~180 turns, which every run reads one state key at a time (~200–250 ms a run here): 1,000 runs would not fit the
 * section's time. The header holds no prompt text, so its size does not depend on the prompt's.
 */
const HEADER_PROMPT = `hello ${'filler '.repeat(215)}`.trim()
/** Time for the viewers' shared watches to park in Restate after they caught up (as the e2e test waits). */
const SETTLE_MS = 2_000
/** Longest wait for the work the section's earlier parts left queued in Restate, before the idle viewers are metered. */
const DRAIN_MAX_MS = 10 * 60_000
/** Reads of the long session timed each way (interleaved). */
const READS = 20
/** The full run's sizes, named in the quick run's figures. */
const FULL = parseOptions([]).sessionLog
const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100

type ProcessName = 'restate' | 'services' | 'gateway'

/** The running stack as this section drives it: URLs, the pid of each process, and the tail of their output. */
interface LogStack { gatewayUrl: string; ingressUrl: string; adminUrl: string; metricsUrl: string; pid(name: ProcessName): number; output(): string; stop(): Promise<void> }

/** What the journal of one run holds (admin SQL: `sys_journal`, cross-checked with `sys_invocation.journal_size`). */
interface Journal { entries: number; stateReads: number; journalSize: number }

interface RunSample { wallMs: number; journal: Journal }

interface SessionHeader { bytes: number; turnCount: number; historyFrom: number; topLevelRunCount: number }

/** CPU seconds of the measured processes and the invocations counter, at one instant. */
interface Meter { atMs: number; measuredCpuSeconds: number; gatewayCpuSeconds: number; invocations: number }

async function startLogStack(dataDir: string): Promise<LogStack> {
  const config = await loadStackConfig({ ...process.env, ZIDANE_DATA_DIR: dataDir, GATEWAY_API_KEYS: API_KEY, ...(await freeStackPortsEnv()) })
  const { stack, output, stop } = await startKeptStack(config, STACK_ENV)
  const pid = (name: ProcessName): number => {
    const value = stack.processes.find(handle => handle.name === name)?.current()?.pid
    if (value === undefined) throw new Error(`no ${name} process`)
    return value
  }
  return { gatewayUrl: stack.gatewayUrl, ingressUrl: stack.ingressUrl, adminUrl: stack.adminUrl, metricsUrl: `http://127.0.0.1:${config.fabricPort}/metrics`, pid, output, stop }
}

/** A run of `sessionId` through the gateway (`?wait=true`): its invocation id and wall time; throws unless it completed. */
async function runPrompt(stack: LogStack, sessionId: string, prompt: string, maxTurns?: number): Promise<{ invocationId: string; wallMs: number }> {
  const started = performance.now()
  const body = JSON.stringify({ prompt, ...(maxTurns === undefined ? {} : { maxTurns }) })
  const response = await fetch(`${stack.gatewayUrl}/v1/sessions/${sessionId}/prompts?wait=true`, { method: 'POST', headers: { ...AUTHORIZATION, 'content-type': 'application/json' }, body })
  const result = (await response.json()) as { invocationId?: string; status?: string; error?: { code: string } }
  const wallMs = performance.now() - started
  if (!response.ok || result.status !== 'completed' || !result.invocationId) throw new Error(`run of ${sessionId} answered ${response.status} ${result.status ?? result.error?.code ?? ''}`)
  return { invocationId: result.invocationId, wallMs }
}

/** `count` one-turn runs of `sessionId`, at most `inFlight` sent at once: Restate queues them, one run of a session at a time. */
async function runMany(stack: LogStack, sessionId: string, prompt: string, count: number, inFlight: number): Promise<void> {
  let sent = 0
  const sender = async (): Promise<void> => {
    while (sent < count) {
      sent += 1
      await runPrompt(stack, sessionId, prompt)
    }
  }
  await Promise.all(Array.from({ length: Math.min(inFlight, count) }, sender))
}

/** Runs `work` for every item, at most `limit` at once. */
async function forEachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<unknown>): Promise<void> {
  const queue = [...items]
  const worker = async (): Promise<void> => { for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item) }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}

async function query<T>(stack: LogStack, sql: string): Promise<T[]> {
  const response = await fetch(`${stack.adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query: sql }) })
  if (!response.ok) throw new Error(`admin query answered ${response.status}: ${await response.text()}`)
  return ((await response.json()) as { rows: T[] }).rows
}

/** The retained journal of a completed invocation, by entry kind; `journal_size` says whether every entry was kept. */
async function journalOf(stack: LogStack, invocationId: string): Promise<Journal> {
  const kinds = await query<{ entry_type: string; entries: number }>(stack, `SELECT entry_type, count(*) AS entries FROM sys_journal WHERE id = '${invocationId}' GROUP BY entry_type`)
  const [invocation] = await query<{ journal_size: number }>(stack, `SELECT journal_size FROM sys_invocation WHERE id = '${invocationId}'`)
  const entries = kinds.reduce((sum, kind) => sum + Number(kind.entries), 0)
  const stateReads = Number(kinds.find(kind => kind.entry_type === 'Command: GetLazyState')?.entries ?? 0)
  return { entries, stateReads, journalSize: Number(invocation?.journal_size ?? Number.NaN) }
}

/** The session's `zidane_session` state value: its size in bytes and the counters it holds. */
async function headerOf(stack: LogStack, sessionId: string): Promise<SessionHeader> {
  const [row] = await query<{ bytes: number; value_utf8: string }>(stack, `SELECT length(value) AS bytes, value_utf8 FROM state WHERE service_name = 'session' AND service_key = '${tenantOf(API_KEY)}~${sessionId}' AND key = 'zidane_session'`)
  if (!row) throw new Error(`session ${sessionId} has no header`)
  const header = JSON.parse(row.value_utf8) as Omit<SessionHeader, 'bytes'>
  return { bytes: Number(row.bytes), turnCount: header.turnCount, historyFrom: header.historyFrom, topLevelRunCount: header.topLevelRunCount }
}

/** Grows `sessionId` through the real handlers (`todos:` prompts, one todoread turn a line) to about `turns` turns. */
async function growSession(stack: LogStack, sessionId: string, turns: number): Promise<number> {
  const runs = Math.ceil(turns / (2 * MAX_GROWTH_LINES + 2))
  const lines = Math.ceil((turns / runs - 2) / 2)
  const prompt = Array.from({ length: lines }, () => 'todos:').join('\n')
  for (let run = 0; run < runs; run++) await runPrompt(stack, sessionId, prompt, lines + 10)
  return (await headerOf(stack, sessionId)).turnCount
}

/** A probe that runs `hello` on `sessionId` and keeps each run's wall time and journal in `samples`. */
function helloProbe(stack: LogStack, name: string, sessionId: string, samples: RunSample[]): { name: string; measure: () => Promise<number> } {
  return {
    name,
    measure: async () => {
      const run = await runPrompt(stack, sessionId, 'hello')
      samples.push({ wallMs: run.wallMs, journal: await journalOf(stack, run.invocationId) })
      return run.wallMs
    },
  }
}

function median(values: readonly number[]): number {
  return summarize(values).median
}

/** Figure 1: a one-turn run of a long session against one of a 10-turn session, interleaved. */
async function measureRunStart(stack: LogStack, options: BenchOptions, report: Report): Promise<void> {
  const { longTurns, warmupRounds, rounds } = options.sessionLog
  const longId = `long-${process.pid}`
  const shortId = `short-${process.pid}`
  const grown = await timed('growth', () => growSession(stack, longId, longTurns))
  await runPrompt(stack, shortId, TEN_TURN_PROMPT)
  const shortTurns = (await headerOf(stack, shortId)).turnCount
  const long: RunSample[] = []
  const short: RunSample[] = []
  await interleave([helloProbe(stack, 'long', longId, long), helloProbe(stack, 'short', shortId, short)], warmupRounds, rounds)
  const windows = { long: await headerOf(stack, longId), short: await headerOf(stack, shortId) }
  addRunStartFigures(report, options, { grown, shortTurns, long: long.slice(warmupRounds), short: short.slice(warmupRounds), first: long[0], windows })
  addReadCostFigures(report, await measureReadCost(stack, longId, READS), windows.long.turnCount)
}

interface RunStartResult { grown: number; shortTurns: number; long: RunSample[]; short: RunSample[]; first: RunSample | undefined; windows: { long: SessionHeader; short: SessionHeader } }

function addRunStartFigures(report: Report, options: BenchOptions, result: RunStartResult): void {
  const { grown, shortTurns, long, short, first, windows } = result
  const scale = options.quick ? ` (quick; full: ${FULL.longTurns.toLocaleString('en')})` : ''
  const longWall = summarize(long.map(sample => sample.wallMs))
  const shortWall = summarize(short.map(sample => sample.wallMs))
  const longEntries = summarize(long.map(sample => sample.journal.entries))
  const shortEntries = summarize(short.map(sample => sample.journal.entries))
  const wallRatio = longWall.median / shortWall.median
  const entriesRatio = longEntries.median / shortEntries.median
  report.figures.push(
    figureOf(SECTION, `one-turn run (hello) of a ${grown.toLocaleString('en')}-turn session${scale}`, 'ms', longWall, { ratio: { value: wallRatio, to: `${shortTurns}-turn session` }, target: { text: '≤ 1.2× the 10-turn session', met: wallRatio <= 1.2 } }),
    figureOf(SECTION, `one-turn run (hello) of a ${shortTurns}-turn session (+2 turns a run)`, 'ms', shortWall),
    figureOf(SECTION, `journal entries of that run: ${grown.toLocaleString('en')}-turn session`, 'entries', longEntries, { ratio: { value: entriesRatio, to: `${shortTurns}-turn session` }, target: { text: '≤ 1.2× the 10-turn session', met: entriesRatio <= 1.2 } }),
    figureOf(SECTION, `journal entries of that run: ${shortTurns}-turn session (+2 turns a run)`, 'entries', shortEntries),
  )
  if (first) report.figures.push(single(SECTION, 'diagnostic: first run after the growth (loads the growth runs after the checkpoint)', 'ms', first.wallMs, { note: `${first.journal.entries} journal entries, ${first.journal.stateReads} state reads` }))
  const sizesAgree = [...long, ...short].every(sample => sample.journal.entries === sample.journal.journalSize)
  report.notes.push(`§${SECTION} Run start: the long session grew through the real handlers (runs of \`todos:\` lines, ZIDANE_COMPACT_BUDGET_TOKENS=${COMPACT_BUDGET_TOKENS} as in the e2e test), then \`hello\` runs (POST …/prompts?wait=true, wall time at the bench) of it and of a ${shortTurns}-turn session alternated, ${options.sessionLog.warmupRounds} warm-up rounds dropped, ${long.length} measured each. Journal entries are counted in the admin API's sys_journal for the run's invocation id (the run handler's journal is retained 1 day)${sizesAgree ? ', equal to sys_invocation.journal_size for every run' : ', NOT always equal to sys_invocation.journal_size'}. State reads (GetLazyState) per run: median ${median(long.map(sample => sample.journal.stateReads))} (long) vs ${median(short.map(sample => sample.journal.stateReads))} (short); the run loads the turns after the compaction checkpoint: at the end ${windows.long.turnCount - windows.long.historyFrom} of ${windows.long.turnCount} turns (long) and ${windows.short.turnCount - windows.short.historyFrom} of ${windows.short.turnCount} (short; its measured runs added 2 turns each).${first ? ` The first run after the growth loaded the last growth run(s) before the checkpoint moved past them: ${first.journal.stateReads} state reads, ${first.journal.entries} entries, ${first.wallMs.toFixed(0)} ms (warm-up, not in the medians).` : ''}`)
}

/** Figure 2: the header's size after 10, 100 and `headerRuns` runs of one session. */
async function measureHeaderGrowth(stack: LogStack, options: BenchOptions, report: Report): Promise<void> {
  const { headerRuns, headerRunsInFlight } = options.sessionLog
  const sessionId = `header-${process.pid}`
  const sizes: Array<{ runs: number; header: SessionHeader }> = []
  for (const checkpoint of [10, 100, headerRuns]) {
    await runMany(stack, sessionId, HEADER_PROMPT, checkpoint - (sizes.at(-1)?.runs ?? 0), headerRunsInFlight)
    sizes.push({ runs: checkpoint, header: await headerOf(stack, sessionId) })
  }
  const first = sizes[0]?.header.bytes ?? Number.NaN
  const last = sizes.at(-1)
  const ratio = (last?.header.bytes ?? Number.NaN) / first
  const scale = options.quick ? ` (quick; full: ${FULL.headerRuns.toLocaleString('en')})` : ''
  for (const { runs, header } of sizes) {
    const isLast = runs === headerRuns
    const target = isLast ? { ratio: { value: ratio, to: '10 runs' }, target: { text: `≤ 1.1× the 10-run header`, met: ratio <= 1.1 } } : {}
    report.figures.push(single(SECTION, `session header (zidane_session) after ${runs.toLocaleString('en')} runs${isLast ? scale : ''}`, 'bytes', header.bytes, { ...target, note: `${header.turnCount} turns, ${header.topLevelRunCount} runs` }))
  }
  report.notes.push(`§${SECTION} Header: one session ran a one-turn prompt (\`hello\` and ${HEADER_PROMPT.length - 5} characters of filler, echoed by the demo model) ${headerRuns} times through the gateway (up to ${headerRunsInFlight} prompts in flight; Restate runs them one at a time, the run handler is exclusive per session); the size is length() of the zidane_session value in the admin API's state table. It holds counters, timestamps and totals, so it grows only by digits: ${sizes.map(size => `${size.header.bytes} B at ${size.runs}`).join(', ')}.`)
}

/** Reads of the long session timed per way of reading (interleaved), with the invocations the reads started. */
interface ReadCost { viaGatewayMs: number[]; viaHandlerMs: number[]; viaSqlMs: number[]; invocationsPerRead: number }

/**
 * What one read of a session costs, three ways, interleaved: `GET /v1/sessions/{id}` through the gateway (the shared
 * `get` handler plus the gateway's `sys_invocation` lookup), the shared `get` handler alone through Restate's ingress,
 * and the header alone through the admin API's SQL (no invocation, but no page of turns either).
 */
async function measureReadCost(stack: LogStack, sessionId: string, reads: number): Promise<ReadCost> {
  const key = `${tenantOf(API_KEY)}~${sessionId}`
  const time = async (read: () => Promise<unknown>): Promise<number> => {
    const started = performance.now()
    const result = await read()
    if (result instanceof Response) { if (!result.ok) throw new Error(`read answered ${result.status}`); await result.arrayBuffer() }
    return performance.now() - started
  }
  const cost: ReadCost = { viaGatewayMs: [], viaHandlerMs: [], viaSqlMs: [], invocationsPerRead: Number.NaN }
  const before = await invokerTasks(stack.metricsUrl)
  for (let index = 0; index < reads; index++) {
    cost.viaGatewayMs.push(await time(() => fetch(`${stack.gatewayUrl}/v1/sessions/${sessionId}`, { headers: AUTHORIZATION })))
    cost.viaHandlerMs.push(await time(() => fetch(`${stack.ingressUrl}/session/${encodeURIComponent(key)}/get`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })))
    cost.viaSqlMs.push(await time(() => headerOf(stack, sessionId)))
  }
  cost.invocationsPerRead = (await invokerTasks(stack.metricsUrl) - before) / (2 * reads)
  return cost
}

function addReadCostFigures(report: Report, cost: ReadCost, turns: number): void {
  report.figures.push(
    figureOf(SECTION, `read a ${turns.toLocaleString('en')}-turn session: GET /v1/sessions/{id} (newest page of 50 turns)`, 'ms', summarize(cost.viaGatewayMs), { note: `${cost.invocationsPerRead.toFixed(2)} invocations a read, none retained` }),
    figureOf(SECTION, 'of which the shared get handler through the ingress', 'ms', summarize(cost.viaHandlerMs)),
    figureOf(SECTION, 'for comparison: the header alone through the admin API SQL', 'ms', summarize(cost.viaSqlMs)),
  )
}

/** utime + stime of `pid` in seconds (`/proc/<pid>/stat`, every thread of the process). */
function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ').at(-1)?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND
}

/** Resident set size of `pid` in bytes (`VmRSS` of `/proc/<pid>/status`). */
function rssBytesOf(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN) * 1024
}

async function meterOf(stack: LogStack): Promise<Meter> {
  const invocations = await invokerTasks(stack.metricsUrl)
  return { atMs: performance.now(), measuredCpuSeconds: cpuSecondsOf(stack.pid('services')) + cpuSecondsOf(stack.pid('restate')), gatewayCpuSeconds: cpuSecondsOf(stack.pid('gateway')), invocations }
}

/** What a window used: CPU in % of one core, invocations started (and per minute), and the counter at its start. */
interface Usage { cpuPercent: number; gatewayCpuPercent: number; invocations: number; perMinute: number; seconds: number; startInvocations: number }

function usageBetween(from: Meter, to: Meter): Usage {
  const seconds = (to.atMs - from.atMs) / 1000
  const invocations = to.invocations - from.invocations
  const percent = (cpuSeconds: number): number => (cpuSeconds / seconds) * 100
  return { cpuPercent: percent(to.measuredCpuSeconds - from.measuredCpuSeconds), gatewayCpuPercent: percent(to.gatewayCpuSeconds - from.gatewayCpuSeconds), invocations, perMinute: (invocations / seconds) * 60, seconds, startInvocations: from.invocations }
}

/** Opens `perSession` viewers of each session and resolves once each received its session's `run:end` (caught up). */
async function openCaughtUpViewers(stack: LogStack, sessionIds: readonly string[], perSession: number): Promise<SseViewer[]> {
  const opening = sessionIds.flatMap(id => Array.from({ length: perSession }, () => openSseViewer(`${stack.gatewayUrl}/v1/sessions/${id}/events`, AUTHORIZATION)))
  const viewers = await Promise.all(opening)
  const refused = viewers.filter(viewer => viewer.status !== 200).length
  if (refused > 0) throw new Error(`${refused} of ${viewers.length} event streams were refused`)
  await Promise.all(viewers.map(viewer => viewer.waitFor(frame => frame.event === 'run:end', 60_000)))
  return viewers
}

/** CPU and invocations over `windowMs`, from `SETTLE_MS` on (the viewers' shared watches park first). */
async function meterWindow(stack: LogStack, windowMs: number): Promise<Usage> {
  await sleepMs(SETTLE_MS)
  const start = await meterOf(stack)
  await sleepMs(windowMs)
  return usageBetween(start, await meterOf(stack))
}

/** Samples the RSS of `pid` (MiB) every second into `samples` until `stop()`, which returns them. */
function traceRss(pid: number): { samples: number[]; stop: () => number[] } {
  const samples: number[] = []
  const sample = (): void => { samples.push(rssBytesOf(pid) / 1024 / 1024) }
  sample()
  const timer = setInterval(sample, 1000)
  return { samples, stop: () => { clearInterval(timer); sample(); return samples } }
}

/** Watches (`event_watch/wait`) Restate still holds, by status: each lasts until its log grows or its timeout passes. */
async function parkedWatches(stack: LogStack): Promise<string> {
  const rows = await query<{ status: string; watches: number }>(stack, "SELECT status, count(*) AS watches FROM sys_invocation WHERE target_service_name = 'event_watch' AND status <> 'completed' GROUP BY status")
  return rows.length === 0 ? 'none' : rows.map(row => `${row.watches} ${row.status}`).join(', ')
}

/** How the stack came to rest before the idle viewers: seconds waited, invocations started meanwhile, and whether it did. */
interface Drain { seconds: number; invocations: number; quiet: boolean }

/**
 * Invocations Restate has yet to finish, but for the parked watches (a gateway's live-replica watch stays running until
 * the invoker's inactivity timeout): those queued behind an object's lock (`pending`), starting, running or retrying.
 */
const UNFINISHED_SQL = `SELECT count(*) AS unfinished FROM sys_invocation WHERE status NOT IN ('completed', 'suspended', 'scheduled') AND target_service_name NOT IN ('${EVENT_WATCH_SERVICE}', '${liveReplicasWatchInterface.name}')`

/**
 * Waits until Restate holds no unfinished invocation twice in a row, at most {@link DRAIN_MAX_MS}. A thousand quick runs
 * of one session leave one-way work queued behind an object's lock (the tenant's index updates; the log's syncs of that
 * session did too): a window opened before it ends counts it as the viewers' (1,600 invocations and 20 % of a core).
 */
async function untilDrained(stack: LogStack): Promise<Drain> {
  const started = await meterOf(stack)
  let idlePolls = 0
  while (idlePolls < 2 && performance.now() - started.atMs < DRAIN_MAX_MS) {
    const [row] = await query<{ unfinished: number }>(stack, UNFINISHED_SQL)
    idlePolls = Number(row?.unfinished ?? 0) === 0 ? idlePolls + 1 : 0
    await sleepMs(1000)
  }
  const ended = await meterOf(stack)
  return { seconds: (ended.atMs - started.atMs) / 1000, invocations: ended.invocations - started.invocations, quiet: idlePolls >= 2 }
}

/** Figure 3: invocations of one idle viewer; CPU and Restate memory of `viewers` idle viewers, and after they left. */
async function measureIdleViewers(stack: LogStack, options: BenchOptions, report: Report): Promise<void> {
  const { viewers: count, viewerSessions, idleWindowMs } = options.sessionLog
  const sessionIds = Array.from({ length: viewerSessions }, (_, index) => `idle-${process.pid}-${index}`)
  await forEachLimited(sessionIds, 10, id => runPrompt(stack, id, 'hello'))
  const drain = await untilDrained(stack)
  const restatePid = stack.pid('restate')
  const trace = traceRss(restatePid)
  const baseline = { bytes: rssBytesOf(restatePid), meter: await meterOf(stack) }
  const many = await openCaughtUpViewers(stack, sessionIds, Math.ceil(count / viewerSessions))
  const busy = await meterWindow(stack, idleWindowMs)
  const open = { bytes: rssBytesOf(restatePid), peakMiB: Math.max(...trace.samples) }
  for (const viewer of many) viewer.close()
  const leftAtMs = performance.now()
  const one = await openCaughtUpViewers(stack, sessionIds.slice(0, 1), 1)
  const quiet = await meterWindow(stack, idleWindowMs)
  for (const viewer of one) viewer.close()
  const after = { bytes: rssBytesOf(restatePid), seconds: (performance.now() - leftAtMs) / 1000, parked: await parkedWatches(stack) }
  const opening = busy.startInvocations - baseline.meter.invocations
  addIdleFigures(report, options, { viewers: many.length, busy, quiet, baselineBytes: baseline.bytes, open, after, opening, drain, trace: trace.stop() })
}

interface IdleResult {
  viewers: number
  busy: Usage
  quiet: Usage
  baselineBytes: number
  /** RSS at the end of the window with the viewers open, and the highest sample since the baseline. */
  open: { bytes: number; peakMiB: number }
  after: { bytes: number; seconds: number; parked: string }
  /** Invocations the opening of the many viewers started. */
  opening: number
  /** The wait for the earlier parts' queued work before the baseline. */
  drain: Drain
  /** RSS every second from the baseline on (MiB). */
  trace: number[]
}

function addIdleFigures(report: Report, options: BenchOptions, result: IdleResult): void {
  const { viewers, busy, quiet, baselineBytes, open, after } = result
  const { viewerSessions, idleWindowMs } = options.sessionLog
  const windowS = (idleWindowMs / 1000).toFixed(0)
  const mib = (bytes: number): number => bytes / 1024 / 1024
  const toleranceBytes = Math.max(0.1 * baselineBytes, 20_000_000)
  const perSession = Math.ceil(viewers / viewerSessions)
  report.figures.push(
    single(SECTION, `one viewer of an idle session: Restate invocations started (${windowS} s window, per minute)`, 'invocations/min', quiet.perMinute, { target: { text: '0', met: quiet.invocations === 0 }, note: `${quiet.invocations} in ${quiet.seconds.toFixed(0)} s` }),
    single(SECTION, `${viewers} idle viewers (${perSession} on each of ${viewerSessions} idle sessions): CPU of services + Restate (${windowS} s)`, '% of a core', busy.cpuPercent, { target: { text: '< 5 %', met: busy.cpuPercent < 5 }, note: `${busy.invocations} invocations started; gateway (not counted) ${busy.gatewayCpuPercent.toFixed(1)} %` }),
    single(SECTION, 'reference: CPU of services + Restate with the one idle viewer', '% of a core', quiet.cpuPercent),
    single(SECTION, 'Restate server RSS before the viewers', 'MiB', mib(baselineBytes)),
    single(SECTION, `Restate server RSS with the ${viewers} viewers open (end of the window)`, 'MiB', mib(open.bytes), { ratio: { value: open.bytes / baselineBytes, to: 'before' }, note: `peak ${open.peakMiB.toFixed(0)} MiB while open` }),
    single(SECTION, `Restate server RSS ${after.seconds.toFixed(0)} s after they left`, 'MiB', mib(after.bytes), { ratio: { value: after.bytes / baselineBytes, to: 'before' }, target: { text: `≤ before + ${mib(toleranceBytes).toFixed(0)} MiB (10 % or 20 MB)`, met: after.bytes <= baselineBytes + toleranceBytes } }),
  )
  const trace = result.trace.filter((_sample, index) => index % 5 === 0).map(mibValue => mibValue.toFixed(0)).join(' ')
  const { drain } = result
  report.notes.push(`§${SECTION} Idle viewers: metered on a drained stack: after the idle sessions' runs the bench waited until Restate held no unfinished invocation but the parked watches (${drain.quiet ? '' : 'NOT reached: '}${drain.seconds.toFixed(0)} s, ${drain.invocations} invocations: mostly the tenant's session-index updates that the header session's ${options.sessionLog.headerRuns.toLocaleString('en')} runs queued behind the index's lock). Each viewer is an SSE stream GET /v1/sessions/{id}/events in the bench process, counted as caught up once it received its session's run:end, metered from ${SETTLE_MS / 1000} s later. Opening the ${viewers} viewers started ${result.opening} invocations (per viewer the session lookup and its catch-up read, per session one parked event_watch/wait and its subscribe); then ${busy.invocations} during the ${viewers}-viewer window and ${quiet.invocations} during the one-viewer window, which ran after the ${viewers} viewers left and is the wait before the last RSS reading (invocations: the node's ${INVOKER_TASKS_COUNTER} counter at /metrics). A parked watch is renewed every GATEWAY_EVENT_WATCH_MS (default 300 s), longer than the window. CPU: utime+stime of the services process and the Restate server from /proc/<pid>/stat over the window, in % of one core (the viewers' own CPU, in the bench, and the gateway's are not counted: it used ${busy.gatewayCpuPercent.toFixed(1)} % with the ${viewers} viewers; the machine is shared, so other load inflates it). RSS: VmRSS of the Restate server, peak ${open.peakMiB.toFixed(0)} MiB while the ${viewers} viewers were open; every 5 s from the baseline (MiB): ${trace}. Watches (event_watch/wait invocations) still in Restate when it was read last: ${after.parked}; a viewer leaving aborts the gateway's call, not the parked invocation, which lasts until its timeout (300 s), and Restate suspends it only after the invoker's inactivity timeout (1 min in restate.toml), holding it running until then.`)
}

/** What the one-turn measure ({@link measureOneTurnRun}) needs of the section's stack. */
function oneTurnStackOf(stack: LogStack): OneTurnStack {
  return { ingressUrl: stack.ingressUrl, adminUrl: stack.adminUrl, query: async <T,>(sql: string) => query<T>(stack, sql), runHello: sessionId => runPrompt(stack, sessionId, 'hello') }
}

/** Runs one part of the section and prints how long it took (stderr, as run.ts does for whole sections). */
async function timed<T>(part: string, measure: () => Promise<T>): Promise<T> {
  const started = performance.now()
  const result = await measure()
  process.stderr.write(`[bench] §${SECTION} ${part}: ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
  return result
}

/**
 * Section 10: the session log on the full stack (gateway → Restate → services, the demo model). A one-turn run of a new
 * session (journal entries, gateway call to run end) beside a hand-written one-step handler; a one-turn run of a
 * session grown past `longTurns` turns against one of a 10-turn session (wall time and journal entries); the size of
 * the session header after 10, 100 and `headerRuns` runs; and idle SSE viewers: invocations they start, CPU of the
 * services and the Restate server while 500 are open, and the server's memory after they left.
 */
export async function measureSessionLog(options: BenchOptions, report: Report): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'zidane-bench-session-log-'))
  let stack: LogStack | undefined
  try {
    stack = await startLogStack(dataDir)
    const started = stack
    const { warmupRounds, rounds } = options.sessionLog
    await timed('one-turn run', () => measureOneTurnRun(oneTurnStackOf(started), SECTION, { warmup: warmupRounds, measured: 3 * rounds }, report))
    await timed('deployment against library', () => measureDeploymentAgainstLibrary(started, tenantOf(API_KEY), SECTION, { warmup: warmupRounds, measured: rounds }, report))
    await timed('run start', () => measureRunStart(started, options, report))
    await timed('header', () => measureHeaderGrowth(started, options, report))
    await timed('idle viewers', () => measureIdleViewers(started, options, report))
  } catch (error) {
    process.stderr.write(`[bench] §${SECTION} failed; the stack's last lines:\n${stack?.output() ?? ''}\n`)
    throw error
  } finally {
    await stack?.stop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

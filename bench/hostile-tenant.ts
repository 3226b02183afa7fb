import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { freeStackPortsEnv } from '../scripts/stack/free-port'
import { loadStackConfig } from '../scripts/stack/stack-config'
import type { RunningStack } from '../scripts/stack/start-stack'
import { UNLIMITED_GATEWAY } from './lib/full-stack'
import { startKeptStack } from './lib/kept-stack'
import type { KeptStack } from './lib/kept-stack'
import type { BenchOptions } from './lib/options'
import { figureOf } from './lib/report'
import type { Report } from './lib/report'
import { startSteadyLoad } from './lib/steady-load'
import type { LoadSample, LoadStream, SteadyLoad } from './lib/steady-load'
import { quantile, sleepMs, summarize } from './lib/stats'

const SECTION = 11
const TENANT_A_KEY = 'zk_bench_hostile_tenant_a'
const TENANT_B_KEY = 'zk_bench_hostile_tenant_b'
const TARGET_P99_MS = 200
/** The file tools' time limit for the bench (default 20 s), so B's regex and reads end within a phase. */
const FILE_TOOL_TIMEOUT_MS = 3_000
/** A request of tenant A unanswered after this long counts as an error (its latency is this long). */
const REQUEST_TIMEOUT_MS = 30_000
/** Tenant A's sessions, read and prompted in turn (a session's runs queue behind each other). */
const A_SESSIONS = 2
const WARMUP_MS = 3_000
/** What A sees right after an attack ends (the kernel reaping B's processes, cgroups removed) counts in its phase. */
const TAIL_MS = 1_000
const BASELINE = 'quiet baseline'
/**
 * Two API keys turn the sandbox on as `required`; the gateway's per-key limits are lifted so they never shape A's
 * latency (B's attacks are a handful of requests).
 */
const STACK_ENV = { ...UNLIMITED_GATEWAY, ANTHROPIC_API_KEY: '', LOG_LEVEL: 'warn', ZIDANE_FILE_TOOL_TIMEOUT_MS: String(FILE_TOOL_TIMEOUT_MS) }

/** One attack of tenant B: the prompt each of its `sessions` repeats until the phase's time is up. */
interface Attack { phase: string; sessions: number; prompt: string }

/** A `tool: <name> <json>` line of the demo model: one call of any tool. */
function toolLine(name: string, input: unknown): string {
  return `tool: ${name} ${JSON.stringify(input)}`
}

/** The attacks of issue #26, one phase each, in order. */
const ATTACKS: readonly Attack[] = [
  { phase: 'B: exponential regex (grep)', sessions: 1, prompt: ["shell: printf 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab\\n' > a.txt && echo ok", toolLine('grep', { pattern: '^(a+)+\\1$' })].join('\n') },
  { phase: 'B: write_file on 4 FIFOs', sessions: 1, prompt: ['shell: rm -f p1 p2 p3 p4 && mkfifo p1 p2 p3 p4 && echo ok', ...['p1', 'p2', 'p3', 'p4'].map(fifo => toolLine('write_file', { path: fifo, content: 'x' }))].join('\n') },
  { phase: 'B: read_file of a 600 MB line-less file', sessions: 1, prompt: ['shell: head -c 629145600 /dev/zero | tr "\\0" a > huge.txt && echo ok', toolLine('read_file', { path: 'huge.txt' })].join('\n') },
  // The fork bomb's children outlive its shell; the shell tool's own timeout (default 120 s) is shortened to bound the round.
  { phase: 'B: memory hog + fork bomb, 4 sessions', sessions: 4, prompt: ['shell: head -c 3G /dev/zero | tail; echo hog ended', toolLine('shell', { command: ':(){ :|:& };: ; sleep 5', timeoutMs: 10_000 })].join('\n') },
]

/** The running stack and the tail of what its processes printed (shown when the section fails). */
type HostileStack = KeptStack

async function startHostileStack(dataDir: string): Promise<HostileStack> {
  const config = await loadStackConfig({ ...process.env, ZIDANE_DATA_DIR: dataDir, GATEWAY_API_KEYS: `${TENANT_A_KEY},${TENANT_B_KEY}`, ...(await freeStackPortsEnv()) })
  return startKeptStack(config, { ...STACK_ENV, ZIDANE_WORKSPACE_ROOT: path.join(dataDir, 'workspaces') })
}

/** What one prompt answered: HTTP status, the run's status and final text. */
interface PromptAnswer { httpStatus: number; status: string; text: string }

async function prompt(gatewayUrl: string, key: string, sessionId: string, text: string, signal?: AbortSignal): Promise<PromptAnswer> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  const response = await fetch(`${gatewayUrl}/v1/sessions/${sessionId}/prompts?wait=true`, { method: 'POST', headers, body: JSON.stringify({ prompt: text }), ...(signal ? { signal } : {}) })
  const body = (await response.json()) as { status?: string; text?: string; error?: { code: string } }
  return { httpStatus: response.status, status: body.status ?? body.error?.code ?? 'unknown', text: body.text ?? '' }
}

/** Tenant A's steady load: a read of one of its sessions every `readIntervalMs`, a `hello` run every `promptIntervalMs`. */
function tenantAStreams(gatewayUrl: string, sessionIds: readonly string[], options: BenchOptions): LoadStream[] {
  const session = (index: number): string => sessionIds[index % sessionIds.length] ?? ''
  const read: LoadStream = {
    kind: 'read',
    intervalMs: options.hostile.readIntervalMs,
    send: async (index, signal) => {
      const response = await fetch(`${gatewayUrl}/v1/sessions/${session(index)}`, { headers: { authorization: `Bearer ${TENANT_A_KEY}` }, signal })
      await response.arrayBuffer()
      if (!response.ok) throw new Error(`read answered ${response.status}`)
    },
  }
  const run: LoadStream = {
    kind: 'prompt',
    intervalMs: options.hostile.promptIntervalMs,
    send: async (index, signal) => {
      const answer = await prompt(gatewayUrl, TENANT_A_KEY, session(index), 'hello', signal)
      if (answer.httpStatus !== 200 || answer.status !== 'completed') throw new Error(`prompt answered ${answer.httpStatus} ${answer.status}`)
    },
  }
  return [read, run]
}

/** What tenant B's side of one phase did: its rounds, how long they took, what the last one answered. */
interface AttackOutcome { rounds: number; roundMs: number[]; failures: string[]; lastText: string; wallMs: number; markers: Map<string, number> }

/** What the defences answer B (in its rounds' final texts), counted per round in the section's note. */
const MARKERS = ['did not finish within', 'not a regular file', 'line cut at', 'Killed', 'fork: retry', 'Creating new namespace failed', "Can't fork", 'timed out after']

/** Repeats `attack` in each of its sessions until `attackMs` passed (a round under way finishes), then waits `TAIL_MS`. */
async function runAttack(gatewayUrl: string, attack: Attack, index: number, attackMs: number): Promise<AttackOutcome> {
  const started = performance.now()
  const outcome: AttackOutcome = { rounds: 0, roundMs: [], failures: [], lastText: '', wallMs: 0, markers: new Map() }
  const loop = async (sessionId: string): Promise<void> => {
    do {
      const roundStarted = performance.now()
      const answer = await prompt(gatewayUrl, TENANT_B_KEY, sessionId, attack.prompt).catch((error: unknown) => ({ httpStatus: 0, status: String(error), text: '' }))
      outcome.roundMs.push(performance.now() - roundStarted)
      outcome.rounds++
      outcome.lastText = answer.text
      for (const marker of MARKERS.filter(known => answer.text.includes(known))) outcome.markers.set(marker, (outcome.markers.get(marker) ?? 0) + 1)
      if (answer.httpStatus !== 200) outcome.failures.push(`${answer.httpStatus} ${answer.status}`)
    } while (performance.now() - started < attackMs)
  }
  await Promise.all(Array.from({ length: attack.sessions }, (_, session) => loop(`attack-${index}-${process.pid}-${session}`)))
  outcome.wallMs = performance.now() - started
  await sleepMs(TAIL_MS)
  return outcome
}

/** The pid of the services process now (the supervisor restarts one that crashed). */
function servicesPid(stack: RunningStack): number | undefined {
  return stack.processes.find(handle => handle.name === 'services')?.current()?.pid
}

/** B's outcome per attacked phase, and whether the services process kept its pid through it. */
interface PhaseRecord { phase: string; attack?: AttackOutcome; servicesRestarted: boolean }

/** A quiet baseline, then each attack in turn, under A's steady load; returns the phases in order. */
async function runPhases(stack: RunningStack, load: SteadyLoad, options: BenchOptions): Promise<PhaseRecord[]> {
  load.phase(BASELINE)
  const records: PhaseRecord[] = []
  let pid = servicesPid(stack)
  await sleepMs(options.hostile.baselineMs)
  records.push({ phase: BASELINE, servicesRestarted: false })
  for (const [index, attack] of ATTACKS.entries()) {
    load.phase(attack.phase)
    process.stderr.write(`[bench] §${SECTION} ${attack.phase}\n`)
    const outcome = await runAttack(stack.gatewayUrl, attack, index, options.hostile.attackMs)
    const now = servicesPid(stack)
    records.push({ phase: attack.phase, attack: outcome, servicesRestarted: now !== pid })
    pid = now
  }
  return records
}

/** B's answer for a note: whitespace folded, long runs of one character counted, cut at 300 characters. */
function compact(text: string): string {
  return text.replace(/\s+/g, ' ').replace(/(.)\1{19,}/g, (run, character: string) => `${character}×${run.length}`).slice(0, 300)
}

/** Milliseconds, rounded, for notes. */
function ms(value: number): string {
  return Number.isFinite(value) ? value.toFixed(0) : '-'
}

function addPhaseFigures(report: Report, records: readonly PhaseRecord[], samples: readonly LoadSample[]): void {
  const baselineP99 = quantile(samples.filter(sample => sample.phase === BASELINE).map(sample => sample.latencyMs), 0.99)
  for (const record of records) {
    const inPhase = samples.filter(sample => sample.phase === record.phase)
    const latencies = inPhase.map(sample => sample.latencyMs)
    const summary = summarize(latencies)
    const errors = inPhase.filter(sample => sample.error !== undefined)
    const max = Math.max(...latencies)
    const byKind = ['read', 'prompt'].map(kind => {
      const kindLatencies = inPhase.filter(sample => sample.kind === kind).map(sample => sample.latencyMs)
      return `${kind}s ${kindLatencies.length}: p50 ${ms(quantile(kindLatencies, 0.5))}, p99 ${ms(quantile(kindLatencies, 0.99))}, max ${ms(Math.max(...kindLatencies))} ms`
    })
    const reasons = [...new Set(errors.map(sample => sample.error))].join('; ')
    report.figures.push({
      ...figureOf(SECTION, `tenant A's requests, ${record.phase}`, 'ms', summary),
      p99: summary.p99,
      max,
      errors: errors.length,
      ...(record.phase === BASELINE ? {} : { ratio: { value: summary.p99 / baselineP99, to: 'baseline p99' } }),
      target: { text: `p99 ${ms(summary.p99)} < ${TARGET_P99_MS} ms; max ${ms(max)}; ${errors.length} errors`, met: summary.p99 < TARGET_P99_MS && errors.length === 0 },
      note: `${byKind.join('; ')}${reasons ? `; errors: ${reasons}` : ''}`,
    })
  }
}

function addNotes(report: Report, stack: RunningStack, records: readonly PhaseRecord[], options: BenchOptions): void {
  const attacks = records.flatMap(record => {
    const attack = record.attack
    if (!attack) return []
    const last = compact(attack.lastText)
    const failures = attack.failures.length > 0 ? `, failed: ${[...new Set(attack.failures)].join(', ')}` : ''
    const restarted = record.servicesRestarted ? ', the services process RESTARTED' : ''
    const markers = [...attack.markers].map(([marker, rounds]) => `"${marker}" in ${rounds}`).join(', ')
    return [`${record.phase.replace(/^B: /, '')}: ${attack.rounds} rounds in ${ms(attack.wallMs)} ms (round p50 ${ms(quantile(attack.roundMs, 0.5))} ms, max ${ms(Math.max(...attack.roundMs))} ms${failures}${restarted}; answers with ${markers || 'none of the markers'}; last answer "${last}")`]
  })
  const { baselineMs, attackMs, readIntervalMs, promptIntervalMs } = options.hostile
  const perKind = report.figures.filter(figure => figure.section === SECTION).map(figure => `${figure.figure.replace(/^tenant A's requests, /, '')}: ${figure.note ?? ''}`)
  report.notes.push(`§${SECTION} Hostile tenant (full stack, two API keys, shell ${stack.shell.mode}: ${stack.shell.reason}; ZIDANE_FILE_TOOL_TIMEOUT_MS=${FILE_TOOL_TIMEOUT_MS}). Tenant A sends, open loop, GET /v1/sessions/{id} every ${readIntervalMs} ms and a \`hello\` run (POST …/prompts?wait=true) every ${promptIntervalMs} ms over ${A_SESSIONS} sessions; a row is every request A sent in the phase (latency to the answer; an error is a non-2xx answer, a run not completed or no answer in ${REQUEST_TIMEOUT_MS / 1000} s). The baseline lasts ${baselineMs / 1000} s; in each attack phase tenant B repeats its prompt for ${attackMs / 1000} s (a round under way finishes) and the phase ends ${TAIL_MS / 1000} s after its last round. Tenant B's rounds: ${attacks.join('. ')}. Tenant A by kind of request: ${perKind.join('. ')}.`)
}

/**
 * Section 11: what a hostile tenant's attacks cost another tenant, on the full stack with two API keys (the sandbox on
 * as `required`). Tenant A's steady stream of cheap requests is timed in a quiet baseline, then while tenant B runs
 * each attack of issue #26 in turn: a backtracking regex, writes to FIFOs, a 600 MB line-less read, memory hogs and
 * fork bombs in four sessions at once.
 */
export async function measureHostileTenant(options: BenchOptions, report: Report): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'zidane-bench-hostile-'))
  let started: HostileStack | undefined
  try {
    started = await startHostileStack(dataDir)
    const { stack } = started
    if (stack.shell.mode !== 'sandboxed') throw new Error(`the sandbox is not usable on this host (shell ${stack.shell.mode}: ${stack.shell.reason})`)
    const sessionIds = Array.from({ length: A_SESSIONS }, (_, index) => `tenant-a-${process.pid}-${index}`)
    for (const id of sessionIds) await prompt(stack.gatewayUrl, TENANT_A_KEY, id, 'hello')
    const load = startSteadyLoad(tenantAStreams(stack.gatewayUrl, sessionIds, options), REQUEST_TIMEOUT_MS, 'warm-up')
    // B's first shell command and file tool pay one-time costs (cgroups, the file worker's entry): not in a phase.
    await Promise.all([prompt(stack.gatewayUrl, TENANT_B_KEY, `warm-up-${process.pid}`, 'shell: echo warm > w.txt\nread: w.txt'), sleepMs(WARMUP_MS)])
    const records = await runPhases(stack, load, options)
    const samples = await load.stop()
    addPhaseFigures(report, records, samples)
    addNotes(report, stack, records, options)
  } catch (error) {
    process.stderr.write(`[bench] §${SECTION} failed; the stack's last lines:\n${started?.output() ?? ''}\n`)
    throw error
  } finally {
    await started?.stop()
    await rm(dataDir, { recursive: true, force: true })
  }
}

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadClusterConfig, withFreePorts } from '../cluster/cluster-config'
import { startCluster } from '../cluster/start-cluster'
import type { RunningCluster } from '../cluster/start-cluster'
import type { ProcessHandle } from '../stack/supervisor'
import { attemptRestarts, checkJournalMismatches, checkModelSteps, checkSessions, checkSideEffects } from './checks'
import type { Violation } from './checks'
import { runKills } from './killer'
import type { KillKind, KillRecord } from './killer'
import { startModelLedger } from './model-ledger'
import type { ModelRequestEntry } from './model-ledger'
import type { ChaosOptions } from './options'
import { seededRandom } from './options'
import { driveSession, gatewayClient, sessionPrompt } from './workload'
import type { SessionKind, SessionRecord } from './workload'

/** The figures and verdict of a chaos run. */
export interface ChaosReport {
  options: ChaosOptions
  durationMs: number
  kills: KillRecord[]
  killsByKind: Record<KillKind, number>
  sessions: SessionRecord[]
  runsByKind: Record<SessionKind, { started: number; completed: number }>
  modelRequests: number
  repeatedInFlight: number
  sideEffectsMissing: number
  /** Per services/Restate kill: ms from the kill to the next model step of the sessions that were working at it. */
  recoveryMs: number[]
  /** Per kind: ms from the kill until the restarted process answered again. */
  backAfterMs: Record<KillKind, number[]>
  snapshotObjects: number
  violations: Violation[]
  /** The model server's request log. */
  modelLog: ModelRequestEntry[]
  /** The last lines the cluster's processes printed (for a failed run). */
  output: string[]
}

const KINDS: readonly SessionKind[] = ['tools', 'question', 'spawn']

/** The `q`-quantile (0..1) of `values`, or undefined for none. */
export function quantile(values: readonly number[], q: number): number | undefined {
  if (values.length === 0) return undefined
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
}

/** Per services or Restate kill: how long the sessions working at that moment waited for their next model step. */
export function recoveryTimes(kills: readonly KillRecord[], entries: readonly ModelRequestEntry[], sessions: readonly SessionRecord[]): number[] {
  const endedAt = new Map(sessions.map(session => [session.id, session.endedAt ?? Number.POSITIVE_INFINITY]))
  const sessionOf = (owner: string): string => owner.replace(/-[ab]$/, '')
  const times: number[] = []
  for (const kill of kills.filter(each => each.kind !== 'gateway')) {
    const working = new Set(entries.filter(entry => entry.at <= kill.at && entry.at > kill.at - 3_000 && (endedAt.get(sessionOf(entry.owner)) ?? 0) > kill.at).map(entry => entry.owner))
    const waits = [...working].flatMap(owner => {
      const next = entries.find(entry => entry.owner === owner && entry.at > kill.at)
      return next ? [next.at - kill.at] : []
    })
    if (waits.length > 0) times.push(Math.max(...waits))
  }
  return times
}

async function startChaosCluster(dataDir: string, env: NodeJS.ProcessEnv, output: string[], fatal: string[]): Promise<{ cluster: RunningCluster; apiKey: string }> {
  const apiKey = 'chaos-key-0123456789abcdef'
  const config = await withFreePorts(await loadClusterConfig({ ...process.env, ZIDANE_DATA_DIR: dataDir, GATEWAY_API_KEYS: apiKey }))
  const keep = (name: string, line: string): void => { output.push(`[${name}] ${line}`); if (output.length > 20_000) output.shift() }
  const processes: ProcessHandle[] = []
  const cluster = await startCluster(config, reason => { fatal.push(reason) }, { extraEnv: env, log: keep, processes }).catch(async (error: unknown) => {
    for (const handle of [...processes].reverse()) await handle.stop()
    throw error
  })
  return { cluster, apiKey }
}

/**
 * Runs sessions on a fresh loopback cluster while killing its processes at random, then checks the ledgers kept
 * outside the processes (the model server's request log, the side-effect file) and Restate's tables.
 */
export async function runChaos(options: ChaosOptions, progress: (line: string) => void = () => undefined): Promise<ChaosReport> {
  const started = Date.now()
  const random = seededRandom(options.seed)
  const dataDir = await mkdtemp(join(tmpdir(), 'zidane-chaos-'))
  const sideEffects = join(dataDir, 'side-effects.log')
  await writeFile(sideEffects, '')
  const model = await startModelLedger()
  const output: string[] = []
  const fatal: string[] = []
  const env: NodeJS.ProcessEnv = {
    ANTHROPIC_API_KEY: model.apiKey, ANTHROPIC_BASE_URL: model.url, ZIDANE_MODEL: 'claude-chaos',
    // The unsafe call's side effect goes to a ledger outside the workspace: no sandbox (one tenant).
    ZIDANE_SANDBOX: 'off', LOG_LEVEL: 'warn',
    // The checks read the services' "Replaying invocation." lines (the SDK's, at info) to see each run's new attempts.
    RESTATE_LOGGING: 'info',
    GATEWAY_RATE_PER_SECOND: '10000', GATEWAY_RATE_BURST: '10000', GATEWAY_MAX_CONCURRENT_RUNS: '10000',
    // Snapshots (and log trimming) happen during the run, not only after hours.
    RESTATE_WORKER__SNAPSHOTS__SNAPSHOT_INTERVAL_NUM_RECORDS: '100',
  }
  let cluster: RunningCluster | undefined
  try {
    const startedCluster = await startChaosCluster(dataDir, env, output, fatal)
    cluster = startedCluster.cluster
    progress(`cluster up in ${((Date.now() - started) / 1000).toFixed(1)} s; ${options.kills} kills over ${options.seconds} s, seed ${options.seed}`)
    let stopped = false
    const client = gatewayClient(cluster.gatewayUrl, startedCluster.apiKey, 60_000, () => stopped)
    const sessions: SessionRecord[] = []
    let killing = true
    const deadline = (): number => (stopped ? 0 : Number.POSITIVE_INFINITY)
    const worker = async (): Promise<void> => {
      while (killing && fatal.length === 0) {
        const id = `c${sessions.length + 1}`
        const kind = KINDS[sessions.length % KINDS.length] ?? 'tools'
        const record: SessionRecord = { id, kind, ...sessionPrompt(id, kind, sideEffects), startedAt: Date.now(), answerStatuses: [] }
        sessions.push(record)
        await driveSession(client, record, deadline).catch((error: unknown) => { record.lastError = error instanceof Error ? error.message : String(error) })
      }
    }
    const workers = Array.from({ length: options.concurrency }, () => worker())
    const kills = await runKills(cluster, options.kills, options.seconds, random, () => fatal.length > 0)
    killing = false
    progress(`${kills.length} kills done; waiting for the ${sessions.filter(each => each.endedAt === undefined).length} sessions still running`)
    const drained = Promise.all(workers)
    let timer: NodeJS.Timeout | undefined
    await Promise.race([drained, new Promise(resolve => { timer = setTimeout(resolve, options.drainSeconds * 1000) })])
    clearTimeout(timer)
    stopped = true
    await drained
    const { violations: stepViolations, repeatedInFlight } = checkModelSteps(model.entries, kills, attemptRestarts(output))
    const { violations: effectViolations, missing } = checkSideEffects(await readFile(sideEffects, 'utf8'), sessions)
    const violations: Violation[] = [
      ...fatal.map((reason): Violation => ({ code: 'run_not_completed', detail: `the cluster gave up: ${reason}` })),
      ...checkSessions(sessions), ...stepViolations, ...effectViolations,
      ...(await checkJournalMismatches([cluster.adminUrl, ...cluster.nodeAdminUrls]).catch((error: unknown): Violation[] => [{ code: 'journal_mismatch', detail: `could not query: ${String(error)}` }])),
    ]
    const backAfterMs: Record<KillKind, number[]> = { services: [], gateway: [], restate: [] }
    for (const kill of kills) if (kill.backAfterMs !== undefined) backAfterMs[kill.kind].push(kill.backAfterMs)
    const runsByKind = Object.fromEntries(KINDS.map(kind => [kind, { started: sessions.filter(each => each.kind === kind).length, completed: sessions.filter(each => each.kind === kind && each.status === 'completed').length }])) as ChaosReport['runsByKind']
    return {
      options, durationMs: Date.now() - started, kills, sessions, runsByKind, violations, output,
      killsByKind: { services: kills.filter(each => each.kind === 'services').length, gateway: kills.filter(each => each.kind === 'gateway').length, restate: kills.filter(each => each.kind === 'restate').length },
      modelRequests: model.entries.length, modelLog: [...model.entries], repeatedInFlight, sideEffectsMissing: missing,
      recoveryMs: recoveryTimes(kills, model.entries, sessions), backAfterMs,
      snapshotObjects: await cluster.snapshotStore.objectCount(),
    }
  } finally {
    await cluster?.stop()
    await model.close()
    await rm(dataDir, { recursive: true, force: true })
  }
}

function ms(value: number | undefined): string {
  return value === undefined ? 'n/a' : `${Math.round(value)} ms`
}

/** The report as the lines `npm run chaos` prints. */
export function renderChaosReport(report: ChaosReport): string[] {
  const completed = report.sessions.filter(each => each.status === 'completed').length
  const lines = [
    `chaos: ${report.kills.length} kills in ${(report.durationMs / 1000).toFixed(0)} s (seed ${report.options.seed})${report.kills.length < report.options.kills ? `; only ${report.kills.length} of ${report.options.kills} fitted in 1.4 × ${report.options.seconds} s (restarts are slow on this machine)` : ''}`,
    `  kills by kind: services ${report.killsByKind.services}, gateway ${report.killsByKind.gateway}, restate node ${report.killsByKind.restate}`,
    `  runs: ${completed}/${report.sessions.length} completed (${Object.entries(report.runsByKind).map(([kind, runs]) => `${kind} ${runs.completed}/${runs.started}`).join(', ')})`,
    `  model requests: ${report.modelRequests}; repeated in flight (a kill or a new attempt in between): ${report.repeatedInFlight}; unsafe calls interrupted before their effect: ${report.sideEffectsMissing}`,
    `  recovery, kill to the next step of the sessions working at it: p50 ${ms(quantile(report.recoveryMs, 0.5))}, p99 ${ms(quantile(report.recoveryMs, 0.99))}, max ${ms(quantile(report.recoveryMs, 1))} (${report.recoveryMs.length} kills)`,
    `  process back (health check) after a kill: ${(['services', 'gateway', 'restate'] as const).map(kind => `${kind} p50 ${ms(quantile(report.backAfterMs[kind], 0.5))} p99 ${ms(quantile(report.backAfterMs[kind], 0.99))}`).join('; ')}`,
    `  snapshot repository: ${report.snapshotObjects} objects`,
    report.violations.length === 0 ? '  violations: none' : `  VIOLATIONS (${report.violations.length}):`,
    ...report.violations.slice(0, 50).map(violation => `    ${violation.code}: ${violation.detail}`),
  ]
  return lines
}

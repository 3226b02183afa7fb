import { INTERRUPTED_TOOL_TEXT } from '../../src/session/heal'
import type { KillRecord } from './killer'
import type { ModelRequestEntry } from './model-ledger'
import type { SessionRecord } from './workload'

/** One broken promise found by the end-of-run checks, with a stable code. */
export interface Violation {
  code: 'run_not_completed' | 'turn_lost' | 'turn_duplicated' | 'answer_wrong' | 'model_step_repeated' | 'side_effect_repeated' | 'journal_mismatch' | 'question_not_delivered'
  detail: string
}

/** What the checks saw besides violations: repeats that a kill explains. */
export interface CheckResult {
  violations: Violation[]
  /** Model steps requested again with a kill between the two requests (a step in flight at the kill). */
  repeatedInFlight: number
  /** Unsafe calls whose side effect is not in the ledger (interrupted before it ran; reported to the model). */
  sideEffectsMissing: number
}

/** Every session completed, with its turns, its text, and (for a question) the bot's answer delivered once. */
export function checkSessions(sessions: readonly SessionRecord[]): Violation[] {
  const violations: Violation[] = []
  for (const session of sessions) {
    if (session.status !== 'completed') {
      violations.push({ code: 'run_not_completed', detail: `${session.id} (${session.kind}) ended ${session.status ?? 'not at all'}${session.lastError ? `; last error: ${session.lastError}` : ''}` })
      continue
    }
    if (session.turns !== session.expectedTurns) violations.push({ code: 'turn_lost', detail: `${session.id} has ${String(session.turns)} model turns, expected ${session.expectedTurns}` })
    // A run's own count includes its sub-agents' turns: compared only for runs without children.
    if (session.kind !== 'spawn' && session.runTurns !== undefined && session.runTurns !== session.expectedTurns) violations.push({ code: 'turn_lost', detail: `${session.id}'s run counts ${session.runTurns} turns, expected ${session.expectedTurns}` })
    if ((session.duplicateTurnIds ?? []).length > 0) violations.push({ code: 'turn_duplicated', detail: `${session.id} holds turns ${session.duplicateTurnIds?.join(', ') ?? ''} twice` })
    // An unsafe call (todowrite, write_file) in flight at a kill is reported to the model as interrupted, not run
    // again: what it would have produced may then be missing from the answer.
    const interrupted = (session.text ?? '').includes(INTERRUPTED_TOOL_TEXT.slice(0, 24))
    for (const expected of session.expectedText) {
      if (!interrupted && !(session.text ?? '').includes(expected)) violations.push({ code: session.kind === 'question' ? 'question_not_delivered' : 'answer_wrong', detail: `${session.id}'s answer lacks "${expected}": ${JSON.stringify(session.text ?? '').slice(0, 300)}` })
    }
    if (session.kind === 'question' && (session.text ?? '').split(`${session.id}-answer`).length - 1 !== 1) violations.push({ code: 'question_not_delivered', detail: `${session.id}'s answer was delivered ${(session.text ?? '').split(`${session.id}-answer`).length - 1} times: ${session.text ?? ''}` })
  }
  return violations
}

/**
 * How long after a Restate node answers again its partitions' leadership may still move (and in-flight steps re-run):
 * the cluster controller can hand leadership back well after the node is healthy. With 10 s a short run once saw a
 * model step requested again 31 ms after its first request outside every window: most likely a step in flight
 * when leadership moved back, not a finished one (the kill tests of the replay matrix count model requests exactly).
 */
export const RESTATE_SETTLE_MS = 30_000
/** How long after a services replica answers again Restate may still retry attempts that the kill broke. */
export const SERVICES_SETTLE_MS = 2_000

/**
 * When each kill of a services replica or a Restate node may disturb running steps: from the kill until the process
 * answers again plus the settle time (a returning node takes partition leadership back, which re-runs the steps
 * then in flight on the old leader). A gateway kill disturbs no step.
 */
export function disruptionWindows(kills: readonly KillRecord[]): Array<[number, number]> {
  return kills.filter(kill => kill.kind !== 'gateway').map(kill => [kill.at, kill.at + (kill.backAfterMs ?? 120_000) + (kill.kind === 'restate' ? RESTATE_SETTLE_MS : SERVICES_SETTLE_MS)])
}

/**
 * No finished model step requested twice: a step's second request is allowed only when a kill's disruption window
 * ({@link disruptionWindows}) overlaps the time between the two requests, or when the owner's run began a new attempt
 * in between (`restarts`, see {@link attemptRestarts}; under load Restate can end an attempt without a kill): the
 * step was in flight, its result not yet in the journal. Any other repeat is a violation.
 */
export function checkModelSteps(entries: readonly ModelRequestEntry[], kills: readonly KillRecord[], restarts: ReadonlyMap<string, readonly number[]> = new Map()): { violations: Violation[]; repeatedInFlight: number } {
  const windows = disruptionWindows(kills)
  // The owner's run began a new attempt between the two requests: the attempt that made the first one ended before
  // its result was journaled (a replay would have returned it), so the step was in flight, whatever ended it.
  const restartedBetween = (owner: string, from: number, to: number): boolean => (restarts.get(owner) ?? []).some(at => at >= from && at <= to)
  const firstSeen = new Map<string, number>()
  const violations: Violation[] = []
  let repeatedInFlight = 0
  for (const entry of entries) {
    const previous = firstSeen.get(entry.key)
    firstSeen.set(entry.key, entry.at)
    if (previous === undefined) continue
    if (windows.some(([from, to]) => from <= entry.at && to >= previous) || restartedBetween(entry.owner, previous, entry.at)) repeatedInFlight++
    else violations.push({ code: 'model_step_repeated', detail: `model step ${JSON.stringify(entry.key.slice(0, 120))} requested again ${entry.at - previous} ms later, outside every kill's disruption window (SDK retry count ${entry.retryCount ?? 0}; ${describeNearestKill(kills, entry.at)})` })
  }
  return { violations, repeatedInFlight }
}

/**
 * When each session's run started a new attempt, from the services' logs (`[session/<tenant>~c<n>/run][inv_…] INFO:
 * Replaying invocation.`, timestamped by the SDK's logger): owner → epoch milliseconds.
 */
export function attemptRestarts(output: readonly string[]): Map<string, number[]> {
  const restarts = new Map<string, number[]>()
  for (const line of output) {
    const match = /\[restate\]\[([^\]]+)\]\[session\/[^\]/]*~(c\d+)\/run\]\[inv_\w+\] INFO: Replaying invocation/.exec(line)
    if (!match?.[1] || !match[2]) continue
    const at = Date.parse(match[1])
    if (Number.isNaN(at)) continue
    restarts.set(match[2], [...(restarts.get(match[2]) ?? []), at])
  }
  return restarts
}

/** The kill that ended last before `at` (of a services replica or a Restate node), for a violation's detail. */
function describeNearestKill(kills: readonly KillRecord[], at: number): string {
  const before = kills.filter(kill => kill.kind !== 'gateway' && kill.at <= at).sort((a, b) => b.at - a.at)[0]
  if (!before) return 'no kill before it'
  const back = before.backAfterMs === undefined ? 'never back' : `back after ${before.backAfterMs} ms`
  return `last kill before it: ${before.target} ${at - before.at} ms earlier, ${back}`
}

/** No unsafe side effect repeated: each tools session's shell call left at most one line in the ledger. */
export function checkSideEffects(ledger: string, sessions: readonly SessionRecord[]): { violations: Violation[]; missing: number } {
  const counts = new Map<string, number>()
  for (const line of ledger.split('\n').map(each => each.trim()).filter(Boolean)) counts.set(line, (counts.get(line) ?? 0) + 1)
  const violations: Violation[] = []
  let missing = 0
  for (const session of sessions.filter(each => each.kind === 'tools')) {
    const count = counts.get(session.id) ?? 0
    if (count > 1) violations.push({ code: 'side_effect_repeated', detail: `${session.id}'s shell command ran ${count} times` })
    if (count === 0) missing++
  }
  return { violations, missing }
}

/**
 * Tries of a query that fails on the server's side. A node that came back after a kill may still miss a peer
 * ("No such scanner") or a partition processor ("expecting a partition store") for tens of seconds, so the tries
 * span about a minute and go round every node's admin API.
 */
const SQL_ATTEMPTS = 30
const SQL_RETRY_MS = 2_000
/** One try's own limit: a node that hangs costs the tries at most about six minutes in all. */
const SQL_TIMEOUT_MS = 10_000

async function sqlOnce(adminUrl: string, query: string): Promise<Array<Record<string, unknown>>> {
  const response = await fetch(`${adminUrl}/query`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify({ query }), signal: AbortSignal.timeout(SQL_TIMEOUT_MS) })
  if (!response.ok) throw Object.assign(new Error(`${response.status} ${await response.text()}`), { status: response.status })
  return ((await response.json()) as { rows?: Array<Record<string, unknown>> }).rows ?? []
}

/**
 * Runs `query` on the admin APIs `adminUrls`, the next one on each try. A 5xx or a refused connection is tried again
 * (up to {@link SQL_ATTEMPTS}); a 4xx (a bad query) is not.
 */
export async function sql(adminUrls: readonly string[], query: string, retryMs = SQL_RETRY_MS): Promise<Array<Record<string, unknown>>> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await sqlOnce(adminUrls[(attempt - 1) % adminUrls.length] ?? '', query)
    } catch (error) {
      const status = (error as { status?: number }).status
      if (attempt >= SQL_ATTEMPTS || (status !== undefined && status < 500)) throw error
      await new Promise(resolve => setTimeout(resolve, retryMs))
    }
  }
}

/** The journal of invocation `id` as `index:type:name` items, for the report of a mismatch. */
async function journalOf(adminUrls: readonly string[], id: string): Promise<string> {
  const rows = await sql(adminUrls, `SELECT index, entry_type, name FROM sys_journal WHERE id = '${id.replace(/[^A-Za-z0-9_]/g, '')}' ORDER BY index`).catch(() => [])
  return rows.map(row => `${String(row.index)}:${String(row.entry_type)}${row.name ? `:${String(row.name)}` : ''}`).join(' ')
}

/**
 * Invocations Restate reports with a journal mismatch (RT0016, SDK code 570), read from `sys_invocation`; each
 * violation carries the failure's fields and the invocation's journal, so the replay bug can be found after the run.
 */
export async function checkJournalMismatches(adminUrls: readonly string[]): Promise<Violation[]> {
  const rows = await sql(adminUrls, "SELECT * FROM sys_invocation WHERE last_failure_error_code IN ('RT0016', '570') OR last_failure LIKE '%mismatch%'").catch((error: unknown) => [{ error: String(error) }])
  const violations: Violation[] = []
  for (const row of rows) {
    if ('error' in row) { violations.push({ code: 'journal_mismatch', detail: `could not read sys_invocation: ${String(row.error)}` }); continue }
    const failure = Object.entries(row).filter(([key, value]) => key.startsWith('last_failure') && value !== null).map(([key, value]) => `${key}=${String(value).slice(0, 400)}`).join('; ')
    violations.push({ code: 'journal_mismatch', detail: `${String(row.id)} ${String(row.target)} ${String(row.status)}: ${failure}; journal: ${await journalOf(adminUrls, String(row.id))}` })
  }
  return violations
}

import type { JsonObject } from '../json'
import type { DurableRuntime } from '../durable/runtime'
import type { Session } from '../session/session'
import type { SessionRun } from '../session/types'
import { CHECKPOINT_FINGERPRINT_TURNS, conversationTurns, fingerprintTurns, tailCutTurn, turnsToMessages } from './history'
import { DEFAULT_COMPACT_BUDGET_TOKENS } from './compaction'
import type { RunLimits, RunState } from './run-state'
import { emptyTotals } from './run-state'
import type { AgentBehavior, AgentRunStatus, AgentStats, RunOptions } from './types'

/** Limits of a new run: the run's own overrides over the agent's behaviour. */
export function limitsFor(behavior: AgentBehavior, options: RunOptions): RunLimits {
  const limits: RunLimits = { maxTurns: options.maxTurns ?? behavior.maxTurns ?? 50 }
  if (behavior.maxWallMs !== undefined) limits.maxWallMs = behavior.maxWallMs
  if (behavior.maxCostUsd !== undefined) limits.maxCostUsd = behavior.maxCostUsd
  const model = options.model ?? behavior.model
  if (model !== undefined) limits.model = model
  return limits
}

/** Mints the id of a session's next run: its ordinal plus a runtime id (unique across processes and invocations). */
export function nextRunId(session: Session, runtime: DurableRuntime): string {
  const ordinal = session.topLevelRunCount + 1
  return `run_${ordinal}_${runtime.uuid().replace(/-/g, '').slice(0, 10)}`
}

/** Builds the state of a fresh run and its record (saved by the caller). */
export function startRunState(session: Session, runId: string, prompt: string, startedAt: number, limits: RunLimits, depth: number): { state: RunState; record: SessionRun } {
  const history = conversationTurns({ turns: session.turnsBetween(session.historyFrom), runs: [...session.runs] }, depth)
  const record: SessionRun = {
    id: runId,
    status: 'running',
    prompt,
    startedAt,
    depth,
    limits: limits as unknown as JsonObject,
    baseTurnCount: session.turnCount,
    baseFingerprint: checkpointFingerprint(session, session.turnCount),
  }
  if (limits.model !== undefined) record.model = limits.model
  return { state: buildState(session, record, turnsToMessages(history), limits, false), record }
}

/** Rebuilds the state of an interrupted run from its record: same id, prompt, start time and limits; history up to its base. */
export function resumeRunState(session: Session, record: SessionRun): RunState {
  const base = session.turnsBetween(session.historyFrom, record.baseTurnCount ?? 0)
  const history = conversationTurns({ turns: base, runs: [...session.runs] }, record.depth)
  return buildState(session, record, turnsToMessages(history), record.limits as unknown as RunLimits, true)
}

function buildState(session: Session, record: SessionRun, messages: RunState['messages'], limits: RunLimits, resumed: boolean): RunState {
  return {
    runId: record.id,
    sessionId: session.id,
    prompt: record.prompt,
    startedAt: record.startedAt,
    depth: record.depth,
    limits,
    resumed,
    messages,
    totals: emptyTotals(),
    turn: 0,
    lastText: '',
    lastModelCostUsd: 0,
  }
}

/** Why a resume would replay against a rewritten history, or `undefined` when the checkpoint matches the saved turns. */
export function checkpointMismatch(session: Session, record: SessionRun): string | undefined {
  const base = record.baseTurnCount
  if (base === undefined || record.baseFingerprint === undefined) return 'the run has no checkpoint of its history'
  if (session.turnCount < base) return `the session has ${session.turnCount} turns, fewer than the ${base} the run started after`
  if (checkpointFingerprint(session, base) !== record.baseFingerprint) return 'the history before the run was rewritten'
  const foreign = session.turnsBetween(base).find(turn => turn.runId !== record.id && !turn.id.startsWith('heal-') && !isChildTurn(session, turn.runId))
  if (foreign) return `turn ${foreign.id} of another run follows the run's checkpoint`
  return undefined
}

/** The fingerprint of the last {@link CHECKPOINT_FINGERPRINT_TURNS} turns before turn `base`, prefixed with `base`. */
function checkpointFingerprint(session: Session, base: number): string {
  return `${base}/${fingerprintTurns(session.turnsBetween(Math.max(base - CHECKPOINT_FINGERPRINT_TURNS, session.historyFrom), base))}`
}

/**
 * Where the history of a new run starts under the `'tail'` strategy: the first turn the compaction of today's history
 * keeps. Later runs never send the turns before it again, so the session may stop loading them.
 */
export function compactedHistoryStart(session: Session, behavior: AgentBehavior, depth: number): number {
  if (behavior.compactStrategy !== 'tail') return session.historyFrom
  const from = session.historyFrom
  const foreign = new Set(session.runs.filter(run => run.depth !== depth).map(run => run.id))
  return tailCutTurn(session.turnsBetween(from), from, behavior.compactBudgetTokens ?? DEFAULT_COMPACT_BUDGET_TOKENS, foreign)
}

function isChildTurn(session: Session, runId: string): boolean {
  return session.runs.some(run => run.id === runId && run.label !== undefined)
}

/** The stats of a finished run. */
export function buildStats(state: RunState, status: AgentRunStatus, endedAt: number, reason: string | undefined): AgentStats {
  const stats: AgentStats = {
    runId: state.runId,
    sessionId: state.sessionId,
    status,
    suspended: status === 'suspended',
    turns: state.totals.turns,
    toolCalls: state.totals.toolCalls,
    modelRequests: state.totals.modelRequests,
    usage: state.totals.usage,
    costUsd: state.totals.costUsd,
    wallMs: Math.max(0, endedAt - state.startedAt),
    startedAt: state.startedAt,
    endedAt,
    text: state.lastText,
    resumed: state.resumed,
  }
  if (reason !== undefined) stats.reason = reason
  return stats
}

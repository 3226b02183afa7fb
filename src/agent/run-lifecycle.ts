import type { JsonObject } from '../durable/json'
import type { DurableRuntime } from '../durable/runtime'
import type { Session } from '../session/session'
import type { SessionRun } from '../session/types'
import { conversationTurns, fingerprintTurns, turnsToMessages } from './history'
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
  const ordinal = session.runs.filter(run => run.label === undefined).length + 1
  return `run_${ordinal}_${runtime.uuid().replace(/-/g, '').slice(0, 10)}`
}

/** Builds the state of a fresh run and its record (saved by the caller). */
export function startRunState(session: Session, runId: string, prompt: string, startedAt: number, limits: RunLimits, depth: number): { state: RunState; record: SessionRun } {
  const history = conversationTurns(session.toJSON(), depth)
  const record: SessionRun = {
    id: runId,
    status: 'running',
    prompt,
    startedAt,
    depth,
    limits: limits as unknown as JsonObject,
    baseTurnCount: session.turns.length,
    baseFingerprint: fingerprintTurns(session.turns),
  }
  if (limits.model !== undefined) record.model = limits.model
  return { state: buildState(session, record, turnsToMessages(history), limits, false), record }
}

/** Rebuilds the state of an interrupted run from its record: same id, prompt, start time and limits; history up to its base. */
export function resumeRunState(session: Session, record: SessionRun): RunState {
  const base = session.turns.slice(0, record.baseTurnCount ?? 0)
  const history = conversationTurns({ turns: base, runs: session.runs as SessionRun[] }, record.depth)
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
  if (session.turns.length < base) return `the session has ${session.turns.length} turns, fewer than the ${base} the run started after`
  if (fingerprintTurns(session.turns.slice(0, base)) !== record.baseFingerprint) return 'the history before the run was rewritten'
  const foreign = session.turns.slice(base).find(turn => turn.runId !== record.id && !turn.id.startsWith('heal-') && !isChildTurn(session, turn.runId))
  if (foreign) return `turn ${foreign.id} of another run follows the run's checkpoint`
  return undefined
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

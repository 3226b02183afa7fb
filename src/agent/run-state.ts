import type { Message, Usage } from '../providers/content'
import { addUsage, emptyUsage } from '../providers/content'
import type { RunTotals } from '../session/types'

/** Limits a run started with; a resumed run keeps them. */
export interface RunLimits {
  maxTurns: number
  maxWallMs?: number
  maxCostUsd?: number
  model?: string
}

/** Everything the loop knows about the run it executes; rebuilt identically on replay from journaled values. */
export interface RunState {
  readonly runId: string
  readonly sessionId: string
  readonly prompt: string
  readonly startedAt: number
  readonly depth: number
  readonly limits: RunLimits
  readonly resumed: boolean
  messages: Message[]
  totals: RunTotals
  turn: number
  lastText: string
  /** Cost of the last model response: the estimate of the next request's cost for the budget check. */
  lastModelCostUsd: number
  /** Set when a hook fired without waiting failed (`fireHook`): the run fails at its next boundary. */
  hookFailure?: string
  /** A durable run logged its hook failure (it logs one). */
  hookFailureLogged?: boolean
}

/** Totals with every count at zero. */
export function emptyTotals(): RunTotals {
  return { usage: emptyUsage(), costUsd: 0, modelRequests: 0, toolCalls: 0, turns: 0 }
}

/** Adds a model response's (or a child run's) usage and cost to the run totals. */
export function addToTotals(totals: RunTotals, usage: Usage, costUsd: number): void {
  totals.usage = addUsage(totals.usage, usage)
  totals.costUsd = roundUsd(totals.costUsd + costUsd)
}

/** Adds a sub-agent's model requests, turns and tool calls to the run totals (its tokens come through {@link addToTotals}). */
export function addWork(totals: RunTotals, work: { modelRequests: number; turns: number; toolCalls: number }): void {
  totals.modelRequests += work.modelRequests
  totals.turns += work.turns
  totals.toolCalls += work.toolCalls
}

/** Rounds to a micro-dollar so sums stay stable. */
export function roundUsd(value: number): number {
  return Math.round(value * 1e9) / 1e9
}

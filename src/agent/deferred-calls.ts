import type { ContentBlock, Message, ToolResultBlock, ToolUseBlock } from '../providers/content'
import { applyToolStateWrites } from '../tools/staged-tool-state'
import type { ToolStateWrites } from '../tools/staged-tool-state'
import { appendMessage } from './history'
import type { RunState } from './run-state'
import { executeCallNow } from './tool-execution'
import type { ToolStepRecord } from './tool-execution'
import { groupToolCalls } from './tool-groups'
import { toResultBlock } from './tool-phase'
import type { ToolPhaseEnv } from './tool-phase'

/**
 * The calls of one turn left to run inside the next model step: every call is `replay: 'safe'`, so they need no step
 * of their own. Their results are journaled with that step's record, one durable round trip for the two; a crash
 * before it is journaled runs them again, which is their contract.
 */
export interface DeferredCalls {
  /** The turn whose model response asked for them. */
  readonly turn: number
  readonly calls: readonly ToolUseBlock[]
}

/**
 * Most result bytes a model step may carry for deferred calls (8 MiB, a quarter of Restate's 32 MiB entry limit), as
 * their number times the runtime's `maxToolResultBytes`: a turn of more calls than that runs them in steps of their own.
 */
export const DEFERRED_RESULTS_BUDGET_BYTES = 8 * 1024 * 1024

/**
 * Whether a turn's calls can wait for the next model step: a runtime that asks for it (`defaults.deferSafeCalls`), no
 * permission policy (its decisions are journaled before the calls), and every call a known tool that may run again
 * and journals nothing itself.
 */
export function canDeferCalls(env: ToolPhaseEnv, calls: readonly ToolUseBlock[]): boolean {
  if (env.runtime.defaults.deferSafeCalls !== true || env.canUseTool) return false
  // Their results share one journal entry with the model's response: keep it far below an entry's limit.
  if (calls.length * (env.runtime.defaults.maxToolResultBytes ?? Number.POSITIVE_INFINITY) > DEFERRED_RESULTS_BUDGET_BYTES) return false
  return calls.every(call => {
    const tool = env.tools.get(call.name)
    return tool !== undefined && tool.replay === 'safe' && tool.journal !== 'self'
  })
}

/** Announces the calls (`tool:start`) and leaves them to the next model step. */
export async function deferSafeCalls(state: RunState, env: ToolPhaseEnv, calls: readonly ToolUseBlock[]): Promise<DeferredCalls> {
  for (const call of calls) await env.hooks.callHook('tool:start', { runId: state.runId, turn: state.turn, callId: call.id, name: call.name, input: call.input })
  return { turn: state.turn, calls }
}

/**
 * Runs deferred calls inside the model step's closure, group by group as the tool phase would, each group against the
 * tool state `snapshot` plus the earlier groups' writes. Returns their records in the model's order.
 */
export async function runDeferredCalls(state: RunState, env: ToolPhaseEnv, deferred: DeferredCalls, snapshot: ToolStateWrites | undefined): Promise<ToolStepRecord[]> {
  const callState: RunState = { ...state, turn: deferred.turn }
  const maxConcurrent = env.behavior.maxConcurrentTools ?? env.runtime.defaults.maxConcurrentTools ?? 10
  const records = new Map<string, ToolStepRecord>()
  let seen = snapshot
  for (const group of groupToolCalls(deferred.calls, env.tools, maxConcurrent)) {
    const settled = await Promise.all(group.map(call => executeCallNow(callState, env, call, seen)))
    group.forEach((call, index) => records.set(call.id, settled[index] as ToolStepRecord))
    if (seen) for (const record of settled) seen = { ...seen, ...record.toolState }
  }
  return deferred.calls.map(call => records.get(call.id) as ToolStepRecord)
}

/** The conversation a model step with deferred calls sends: the history, their results, then steered messages. */
export function withDeferredResults(messages: readonly Message[], deferred: DeferredCalls | undefined, records: readonly ToolStepRecord[], steered: readonly ContentBlock[] | undefined): Message[] {
  const extended = [...messages]
  if (deferred) appendMessage(extended, 'user', deferred.calls.map((call, index) => toResultBlock(call, records[index])))
  if (steered) appendMessage(extended, 'user', steered)
  return extended
}

/**
 * After the model step: applies the deferred calls' tool-state writes in the model's order, moves the journaled clock,
 * fires `tool:end` for each, and returns their result blocks.
 */
export async function deferredResults(state: RunState, env: ToolPhaseEnv, deferred: DeferredCalls, records: readonly ToolStepRecord[]): Promise<ToolResultBlock[]> {
  for (const record of records) await applyToolStateWrites(env.toolState, record.toolState)
  for (const record of records) if (typeof record.endedAt === 'number') env.onJournaledTime(record.endedAt)
  for (const [index, call] of deferred.calls.entries()) {
    const record = records[index] ?? { content: 'The call has no result.', isError: true }
    await env.hooks.callHook('tool:end', { runId: state.runId, turn: deferred.turn, callId: call.id, name: call.name, result: record, interrupted: false })
  }
  return deferred.calls.map((call, index) => toResultBlock(call, records[index]))
}

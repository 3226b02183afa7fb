import type { JsonValue } from '../durable/json'
import { stepKey } from '../durable/runtime'
import type { ToolResultBlock, ToolUseBlock } from '../providers/content'
import { groupToolCalls } from './tool-groups'
import type { ToolExecutionEnv, ToolStepRecord } from './tool-execution'
import { startToolCall } from './tool-execution'
import type { RunState } from './run-state'
import type { RequestInteraction } from './types'
import { toToolResult } from '../tools/tool'

/** What the tool phase of a turn produced: results in the model's order, and whether it stopped early. */
export interface ToolPhaseOutcome {
  results: ToolResultBlock[]
  records: ToolStepRecord[]
  stoppedBy?: 'abort' | 'suspend'
}

/** Extra inputs of the tool phase. */
export interface ToolPhaseEnv extends ToolExecutionEnv {
  requestInteraction: RequestInteraction | undefined
  isAborted: () => boolean
  onJournaledTime: (time: number) => void
  /** The latest time read from the journal: replay-stable, used to stamp turns. */
  journaledTime: () => number
}

const NOT_RUN_TEXT = 'The run was stopped before this call started.'
const NOT_APPROVED_TEXT = 'The user did not approve this call.'

/** Runs a turn's tool calls group by group (each group's calls start together and are joined by the runtime). */
export async function runToolPhase(state: RunState, env: ToolPhaseEnv, calls: readonly ToolUseBlock[]): Promise<ToolPhaseOutcome> {
  const maxConcurrent = env.behavior.maxConcurrentTools ?? env.runtime.defaults.maxConcurrentTools ?? 10
  const records = new Map<string, ToolStepRecord>()
  let stoppedBy: ToolPhaseOutcome['stoppedBy']
  for (const group of groupToolCalls(calls, env.tools, maxConcurrent)) {
    stoppedBy = env.isSuspending() ? 'suspend' : env.isAborted() ? 'abort' : undefined
    if (stoppedBy) break
    const approved = await approveGroup(state, env, group)
    const runnable = group.filter(call => approved.get(call.id) !== false)
    for (const call of group) if (approved.get(call.id) === false) records.set(call.id, { content: NOT_APPROVED_TEXT, isError: true })
    for (const call of runnable) await env.hooks.callHook('tool:start', { runId: state.runId, turn: state.turn, callId: call.id, name: call.name, input: call.input })
    const settled = await runGroup(state, env, runnable)
    runnable.forEach((call, index) => records.set(call.id, settled[index] as ToolStepRecord))
    for (const call of runnable) await endHook(state, env, call, records.get(call.id) as ToolStepRecord)
  }
  if (stoppedBy === 'suspend') return { results: [], records: [...records.values()], stoppedBy }
  const results = calls.map(call => toResultBlock(call, records.get(call.id)))
  return stoppedBy ? { results, records: [...records.values()], stoppedBy } : { results, records: [...records.values()] }
}

async function runGroup(state: RunState, env: ToolPhaseEnv, group: readonly ToolUseBlock[]): Promise<ToolStepRecord[]> {
  const resuming = (call: ToolUseBlock): void => {
    void env.hooks.callHook('tool:resuming', { runId: state.runId, turn: state.turn, callId: call.id, name: call.name })
  }
  const promises = group.map(call => startToolCall(state, env, call, resuming))
  const joined = promises.length === 1 ? [await (promises[0] as Promise<ToolStepRecord>)] : await env.runtime.all(promises)
  // Tools that journal themselves may resolve to bare output (a string or blocks): normalize after the join.
  const settled: ToolStepRecord[] = joined.map(record => toToolResult(record))
  for (const record of settled) if (typeof record.endedAt === 'number') env.onJournaledTime(record.endedAt)
  // Tools that journal themselves (questions, sub-agents) carry no end time: read the durable clock once for them.
  if (settled.some(record => typeof record.endedAt !== 'number')) env.onJournaledTime(await env.runtime.now())
  return settled
}

async function endHook(state: RunState, env: ToolPhaseEnv, call: ToolUseBlock, record: ToolStepRecord): Promise<void> {
  await env.hooks.callHook('tool:end', { runId: state.runId, turn: state.turn, callId: call.id, name: call.name, result: record, interrupted: record.interrupted === true })
}

function toResultBlock(call: ToolUseBlock, record: ToolStepRecord | undefined): ToolResultBlock {
  if (!record) return { type: 'tool_result', toolUseId: call.id, content: NOT_RUN_TEXT, isError: true }
  const block: ToolResultBlock = { type: 'tool_result', toolUseId: call.id, content: record.content }
  if (record.isError) block.isError = true
  return block
}

/** Asks a human for the calls whose permission is `'ask'`; the question is sent once and the answer is durable. */
async function approveGroup(state: RunState, env: ToolPhaseEnv, group: readonly ToolUseBlock[]): Promise<Map<string, boolean>> {
  const approvals = new Map<string, boolean>()
  if (!env.canUseTool) return approvals
  for (const call of group) {
    const permission = await env.canUseTool({ callId: call.id, name: call.name, input: call.input })
    if (permission === 'ask') approvals.set(call.id, await requestApproval(state, env, call))
  }
  return approvals
}

async function requestApproval(state: RunState, env: ToolPhaseEnv, call: ToolUseBlock): Promise<boolean> {
  const awakeable = env.runtime.awakeable<JsonValue>(stepKey(state.runId, 'custom', `t${state.turn}`, call.id, 'approval-awakeable'))
  await env.runtime.step(stepKey(state.runId, 'interaction', `t${state.turn}`, call.id, 'approval'), async () => {
    const request = { kind: 'approval' as const, sessionId: state.sessionId, runId: state.runId, callId: call.id, question: `Allow ${call.name} with ${JSON.stringify(call.input)}?`, awakeable: { id: awakeable.id } }
    await env.requestInteraction?.(request)
    await env.hooks.callHook('interaction:request', request)
    return true
  })
  const outcome = await awakeable.wait()
  return !outcome.timedOut && isApproval(outcome.value)
}

function isApproval(value: JsonValue): boolean {
  if (value === true) return true
  if (typeof value === 'string') return /^(y|yes|approve|approved|allow|ok)$/i.test(value.trim())
  if (value && typeof value === 'object' && !Array.isArray(value)) return value.approved === true
  return false
}

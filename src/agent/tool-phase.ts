import type { JsonValue } from '../json'
import { stepKey } from '../durable/runtime'
import type { StepKey } from '../durable/runtime'
import type { ToolResultBlock, ToolUseBlock } from '../providers/content'
import { groupToolCalls } from './tool-groups'
import { waitAnnounced } from './wait-announced'
import type { ToolExecutionEnv, ToolStepRecord } from './tool-execution'
import { startToolCall, toolStepKey } from './tool-execution'
import type { RunState } from './run-state'
import type { InteractionRequest, RequestInteraction, ToolPermission } from './types'
import { callsUseToolState, toToolResult } from '../tools/tool'
import { applyToolStateWrites, takeToolStateSnapshot } from '../tools/staged-tool-state'

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
const EXPIRED_TEXT = 'The approval of this call expired before anyone answered, so it was denied.'

/**
 * Runs a turn's tool calls group by group (each group's calls start together and are joined by the runtime). With
 * `announced` (calls a turn deferred, already told `tool:start`), no call is announced again, and one that never runs
 * still gets its `tool:end`.
 */
export async function runToolPhase(state: RunState, env: ToolPhaseEnv, calls: readonly ToolUseBlock[], announced = false): Promise<ToolPhaseOutcome> {
  const maxConcurrent = env.behavior.maxConcurrentTools ?? env.runtime.defaults.maxConcurrentTools ?? 10
  const records = new Map<string, ToolStepRecord>()
  let stoppedBy: ToolPhaseOutcome['stoppedBy']
  // The steps whose journaled results stand for the intents of the next group's unsafe calls (see `StepOptions.after`):
  // the turn's model step, then the decision step or the previous group, as long as no durable wait comes between.
  let anchors: StepKey[] | undefined = [stepKey(state.runId, 'model', `t${state.turn}`)]
  for (const group of groupToolCalls(calls, env.tools, maxConcurrent)) {
    stoppedBy = env.isSuspending() ? 'suspend' : env.isAborted() ? 'abort' : undefined
    if (stoppedBy) break
    const decided = await decideGroup(state, env, group, anchors)
    const refused = decided.refused
    const runnable = group.filter(call => !refused.has(call.id))
    for (const [callId, record] of refused) records.set(callId, record)
    if (!announced) for (const call of runnable) await env.hooks.callHook('tool:start', { runId: state.runId, turn: state.turn, callId: call.id, name: call.name, input: call.input })
    const settled = await runGroup(state, env, runnable, decided.anchors)
    anchors = runnable.length === 0 ? decided.anchors : groupAnchors(state, env, runnable)
    runnable.forEach((call, index) => records.set(call.id, settled[index] as ToolStepRecord))
    for (const call of runnable) await endHook(state, env, call, records.get(call.id) as ToolStepRecord)
  }
  if (announced) for (const call of calls) if (!records.has(call.id)) await endHook(state, env, call, { content: NOT_RUN_TEXT, isError: true })
  if (stoppedBy === 'suspend') return { results: [], records: [...records.values()], stoppedBy }
  const results = calls.map(call => toResultBlock(call, records.get(call.id)))
  return stoppedBy ? { results, records: [...records.values()], stoppedBy } : { results, records: [...records.values()] }
}

/** The steps of a group that ran, as anchors of the next one; none when a call journals itself (it may wait durably). */
function groupAnchors(state: RunState, env: ToolPhaseEnv, group: readonly ToolUseBlock[]): StepKey[] | undefined {
  if (group.some(call => env.tools.get(call.name)?.journal === 'self')) return undefined
  return group.map(call => toolStepKey(state, call))
}

async function runGroup(state: RunState, env: ToolPhaseEnv, group: readonly ToolUseBlock[], anchors: readonly StepKey[] | undefined): Promise<ToolStepRecord[]> {
  // Read before the group's steps start: nothing may touch the store inside a step, nor between starting and joining them.
  const snapshot = callsUseToolState(env.tools, group) ? await takeToolStateSnapshot(env.toolState) : undefined
  const promises = group.map(call => startToolCall(state, env, call, snapshot, anchors))
  const joined = promises.length === 1 ? [await (promises[0] as Promise<ToolStepRecord>)] : await env.runtime.all(promises)
  // Tools that journal themselves may resolve to bare output (a string or blocks): normalize after the join.
  const settled: ToolStepRecord[] = joined.map(record => toToolResult(record))
  // Staged writes land after the steps, in the model's call order: the same state commands on every replay.
  for (const record of settled) await applyToolStateWrites(env.toolState, record.toolState)
  for (const record of settled) if (typeof record.endedAt === 'number') env.onJournaledTime(record.endedAt)
  // Tools that journal themselves (questions, sub-agents) carry no end time: read the durable clock once for them.
  if (settled.some(record => typeof record.endedAt !== 'number')) env.onJournaledTime(await env.runtime.now())
  return settled
}

async function endHook(state: RunState, env: ToolPhaseEnv, call: ToolUseBlock, record: ToolStepRecord): Promise<void> {
  await env.hooks.callHook('tool:end', { runId: state.runId, turn: state.turn, callId: call.id, name: call.name, result: record, interrupted: record.interrupted === true })
}

/** The result block of a call: its record's content, or the not-run text when it has none. */
export function toResultBlock(call: ToolUseBlock, record: ToolStepRecord | undefined): ToolResultBlock {
  if (!record) return { type: 'tool_result', toolUseId: call.id, content: NOT_RUN_TEXT, isError: true }
  const block: ToolResultBlock = { type: 'tool_result', toolUseId: call.id, content: record.content }
  if (record.isError) block.isError = true
  return block
}

/**
 * Applies `canUseTool` to a group before any of its calls start: denied calls and calls a human did not approve get a
 * result instead of running. The decisions are journaled (one `decision` step per group), so a policy that answers
 * differently on a replay cannot change the journal's path; approvals are asked once and their answers are durable.
 * Tools that journal themselves are covered here too; journaled calls are checked again when their step runs.
 */
async function decideGroup(state: RunState, env: ToolPhaseEnv, group: readonly ToolUseBlock[], anchors: StepKey[] | undefined): Promise<{ refused: Map<string, ToolStepRecord>; anchors: StepKey[] | undefined }> {
  const refused = new Map<string, ToolStepRecord>()
  const decided = await decidePermissions(state, env, group)
  // The decision step, when there is one, is the last step before the calls; an approval is a durable wait: no anchor.
  let after = decided.step ? [decided.step] : anchors
  for (const call of group) {
    const decision = decided.decisions[call.id] ?? 'allow'
    if (typeof decision === 'object') refused.set(call.id, { content: `Permission denied for ${call.name}: ${decision.deny}`, isError: true })
    else if (decision === 'ask') {
      after = undefined
      const verdict = await requestApproval(state, env, call)
      if (!verdict.approved) refused.set(call.id, { content: verdict.text, isError: true })
    }
  }
  return { refused, anchors: after }
}

async function decidePermissions(state: RunState, env: ToolPhaseEnv, group: readonly ToolUseBlock[]): Promise<{ decisions: Record<string, ToolPermission>; step?: StepKey }> {
  const canUseTool = env.canUseTool
  const first = group[0]
  if (!canUseTool || !first) return { decisions: {} }
  const step = stepKey(state.runId, 'decision', `t${state.turn}`, first.id, 'permissions')
  // Stamped: the record of each attempt differs, which the runtime's anchor hints rely on (see `digestOf`).
  const { decisions } = await env.runtime.step(step, async () => {
    const decided: Record<string, ToolPermission> = {}
    for (const call of group) decided[call.id] = normalizePermission(await canUseTool({ callId: call.id, name: call.name, input: call.input }))
    return { decisions: decided, at: Date.now() }
  })
  return { decisions, step }
}

function normalizePermission(permission: ToolPermission): ToolPermission {
  if (permission === 'allow' || permission === 'ask') return permission
  if (permission && typeof permission === 'object' && typeof permission.deny === 'string') return { deny: permission.deny }
  return 'allow'
}

async function requestApproval(state: RunState, env: ToolPhaseEnv, call: ToolUseBlock): Promise<ApprovalVerdict> {
  const timeoutMs = env.behavior.approvalTimeoutMs
  const awakeable = env.runtime.awakeable<JsonValue>(stepKey(state.runId, 'custom', `t${state.turn}`, call.id, 'approval-awakeable'), timeoutMs ? { timeoutMs } : {})
  const request: InteractionRequest = { kind: 'approval', sessionId: state.sessionId, runId: state.runId, callId: call.id, question: `Allow ${call.name} with ${JSON.stringify(call.input)}?`, awakeable: { id: awakeable.id }, tool: { name: call.name, input: call.input } }
  const selfJournaled = env.requestInteraction?.journal === 'self'
  let sentLive = false
  await env.runtime.step(stepKey(state.runId, 'interaction', `t${state.turn}`, call.id, 'approval'), async () => {
    sentLive = true
    if (!selfJournaled) await env.requestInteraction?.(request)
    await env.hooks.callHook('interaction:request', request)
    return true
  })
  const done = selfJournaled ? await env.requestInteraction?.(request) : undefined
  // A self-journaling host already announces on every execution: only the others are told again after a resume.
  const outcome = await waitAnnounced(env.runtime, awakeable, sentLive || selfJournaled, async () => {
    const again = { ...request, resumed: true }
    await env.requestInteraction?.(again)
    await env.hooks.callHook('interaction:request', again)
  })
  if (typeof done === 'function') await done({ timedOut: outcome.timedOut })
  return outcome.timedOut ? { approved: false, text: EXPIRED_TEXT } : approvalVerdict(outcome.value)
}

/** A person's answer to an approval: run the call, or the error result the model gets instead. */
type ApprovalVerdict = { approved: true } | { approved: false; text: string }

/**
 * Reads an approval answer: `{ decision: 'approve' | 'deny', reason? }` (the deployment's answer body), `true`,
 * `{ approved: true }`, or a word (`yes`, `approve`, `allow`, `ok`); anything else denies. A denial's reason reaches
 * the model.
 */
export function approvalVerdict(value: JsonValue): ApprovalVerdict {
  if (value === true) return { approved: true }
  if (typeof value === 'string') return /^(y|yes|approve|approved|allow|ok)$/i.test(value.trim()) ? { approved: true } : { approved: false, text: NOT_APPROVED_TEXT }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { approved: false, text: NOT_APPROVED_TEXT }
  if (value.approved === true || value.decision === 'approve') return { approved: true }
  const reason = typeof value.reason === 'string' && value.reason.trim() !== '' ? value.reason.trim() : undefined
  return { approved: false, text: reason ? `${NOT_APPROVED_TEXT} Reason: ${reason}` : NOT_APPROVED_TEXT }
}

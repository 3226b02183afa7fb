import type { Hookable } from 'hookable'
import { stepKey } from '../durable/runtime'
import { AgentAbortedError, RunTakenOverError } from '../errors/zidane-error'
import type { ContentBlock, ToolResultBlock, ToolUseBlock } from '../providers/content'
import { textOf } from '../providers/content'
import type { ModelResponse, Provider, ToolSpec } from '../providers/provider'
import type { Session } from '../session/session'
import type { SessionTurn } from '../session/types'
import { compactTail, DEFAULT_COMPACT_BUDGET_TOKENS } from './compaction'
import { fireHook, hookFailureEnds } from './fire-hook'
import { appendMessage } from './history'
import type { AttemptDelta } from './model-attempt'
import type { ModelStepRecord } from './model-step'
import { executeModelStep } from './model-step'
import { addToTotals, addWork } from './run-state'
import type { RunState } from './run-state'
import type { ToolPhaseEnv } from './tool-phase'
import { runToolPhase } from './tool-phase'
import type { SteeringInbox } from '../durable/runtime'
import { takeSteering } from './take-steering'
import type { TakenSteering } from './take-steering'
import { canDeferCalls, deferredResults, deferSafeCalls, runDeferredCalls, withDeferredResults } from './deferred-calls'
import type { DeferredCalls } from './deferred-calls'
import type { ToolStepRecord } from './tool-execution'
import { takeToolStateSnapshot } from '../tools/staged-tool-state'
import { callsUseToolState } from '../tools/tool'
import type { AgentHooks, AgentRunStatus } from './types'

/** How the turn loop ended. */
export interface LoopOutcome { status: AgentRunStatus; reason?: string }

/** Everything the turn loop needs beyond the run state. */
export interface LoopEnv extends ToolPhaseEnv {
  provider: Provider
  system: string | undefined
  hooks: Hookable<AgentHooks>
  session: Session | undefined
  modelSignal: AbortSignal
  steering: SteeringInbox | undefined
}

const TRUNCATED_TOOL_TEXT = 'This tool call was cut off by max_tokens before its input was complete, so it did not run. Call it again with a shorter input.'

/** What one turn hands the next: the calls it left to run with the next model step (see `deferSafeCalls`). */
interface TurnCarry { deferred?: DeferredCalls | undefined }

/** Runs turns until the model ends its turn or a limit, an abort or a suspend stops the run. */
export async function runTurnLoop(state: RunState, env: LoopEnv): Promise<LoopOutcome> {
  const carry: TurnCarry = {}
  try {
    for (;;) {
      const stop = checkBeforeTurn(state, env)
      if (stop) return (await runDeferredAlone(state, env, carry)) ?? stop
      const outcome = await runOneTurn(state, env, carry)
      if (outcome) return outcome
    }
  } catch (error) {
    if (error instanceof RunTakenOverError) return { status: 'aborted', reason: error.message }
    if (error instanceof AgentAbortedError || (error instanceof Error && error.name === 'AbortError')) {
      return env.isSuspending() ? { status: 'suspended' } : { status: 'aborted', reason: 'aborted' }
    }
    throw error
  }
}

function checkBeforeTurn(state: RunState, env: LoopEnv): LoopOutcome | undefined {
  if (hookFailureEnds(env.runtime, state)) return { status: 'error', reason: state.hookFailure ?? '' }
  if (env.isSuspending()) return { status: 'suspended' }
  if (env.isAborted()) return { status: 'aborted', reason: 'aborted' }
  if (state.turn >= state.limits.maxTurns) return { status: 'limit', reason: `maxTurns ${state.limits.maxTurns} reached` }
  return undefined
}

/**
 * The run stops before another model step: calls left for it run now, in steps of their own, as any turn's calls
 * would. Returns how their phase stopped the run (an abort or a suspend), if it did.
 */
async function runDeferredAlone(state: RunState, env: LoopEnv, carry: TurnCarry): Promise<LoopOutcome | undefined> {
  const deferred = carry.deferred
  if (!deferred) return undefined
  carry.deferred = undefined
  const outcome = await runTools(state, env, [...deferred.calls], true)
  await env.hooks.callHook('turn:end', { runId: state.runId, turn: deferred.turn })
  return outcome
}

async function runOneTurn(state: RunState, env: LoopEnv, carry: TurnCarry): Promise<LoopOutcome | undefined> {
  const deferred = carry.deferred
  carry.deferred = undefined
  state.turn += 1
  await env.hooks.callHook('turn:start', { runId: state.runId, turn: state.turn })
  const steered = await takeSteering(state, env, deferred === undefined)
  let record = await requestModel(state, env, deferred, steered)
  if (deferred && record.decision === 'calls-alone') {
    // An attempt died in the step that ran them: they run in steps of their own (a crash is counted against the call
    // that caused it), then the model is asked in a step of its own.
    const outcome = await runTools({ ...state, turn: deferred.turn }, env, [...deferred.calls], true)
    await env.hooks.callHook('turn:end', { runId: state.runId, turn: deferred.turn })
    if (outcome) return outcome
    await steered.append()
    record = await requestModel(state, env, undefined, NO_STEERING, 'after-calls')
  } else if (deferred) {
    await finishDeferredCalls(state, env, deferred, record.tools ?? [])
    await env.hooks.callHook('turn:end', { runId: state.runId, turn: deferred.turn })
    await steered.append()
    if (env.behavior.compactStrategy === 'tail') compactMessages(state, env)
  }
  // The request was stopped after the deferred calls ran: their results (and steered messages) are in; now stop.
  if (record.decision === 'aborted' || record.decision === 'calls-alone') throw new AgentAbortedError('The model request was stopped.')
  if (record.decision === 'stop') return { status: record.status, reason: record.reason }
  if (record.decision === 'error') return { status: 'error', reason: `${record.error.code}: ${record.error.message}` }
  env.onJournaledTime(record.endedAt)
  const response = record.response
  await recordResponse(state, env, response, record.endedAt)
  const outcome = await continueAfterResponse(state, env, response, carry)
  // A turn whose calls wait for the next model step ends once their results are in (`finishDeferredCalls`).
  if (!carry.deferred) await env.hooks.callHook('turn:end', { runId: state.runId, turn: state.turn })
  return outcome
}

/**
 * The model step's record, with the results of the calls it ran first when the previous turn deferred them; `aborted`
 * when the request was stopped (abort, suspend) after they ran, so their results are still journaled.
 */
type TurnStepRecord = (ModelStepRecord | { decision: 'aborted'; at: number } | { decision: 'calls-alone'; at: number }) & { tools?: ToolStepRecord[] }

const NO_STEERING: TakenSteering = { content: undefined, append: async () => undefined }

async function requestModel(state: RunState, env: LoopEnv, deferred: DeferredCalls | undefined, steered: TakenSteering, variant?: string): Promise<TurnStepRecord> {
  const compacted = deferred ? undefined : compactMessages(state, env)
  const messageCount = compacted?.length ?? state.messages.length + 1
  await env.hooks.callHook('model:request', { runId: state.runId, turn: state.turn, messageCount, toolCount: env.tools.size })
  const turn = state.turn
  // Read before the step: nothing may touch the store inside it.
  const snapshot = deferred && callsUseToolState(env.tools, deferred.calls) ? await takeToolStateSnapshot(env.toolState) : undefined
  const key = variant === undefined ? stepKey(state.runId, 'model', `t${turn}`) : stepKey(state.runId, 'model', `t${turn}`, variant)
  // The model's turn reaches the session with the step's record where the runtime can (one commit, see `sessionTurns`);
  // not after deferred calls, whose results turn comes first, nor for a session the runtime's store does not keep (one
  // in memory only): the runtime would write its turn into a store that holds no such session.
  const session = deferred || env.session?.store !== env.runtime.stores.session ? undefined : env.session
  const sessionTurns = session ? (value: TurnStepRecord) => (value.decision === 'request' ? { sessionId: session.id, turns: [assistantTurn(state.runId, turn, value.response, value.endedAt)] } : undefined) : undefined
  return env.runtime.step(key, async attempt => {
    env.markLive()
    // An earlier attempt died in this step, maybe in one of the calls: they leave it (see `runOneTurn`).
    if (deferred && attempt.resumed) return { decision: 'calls-alone', at: Date.now() }
    const tools = deferred ? await runDeferredCalls(state, env, deferred, snapshot) : undefined
    const messages = compacted ?? compactDeferred(withDeferredResults(state.messages, deferred, tools ?? [], steered.content), env)
    let record: TurnStepRecord
    try {
      record = await executeModelStep(withDeferredCost(state, tools), {
        provider: env.provider,
        system: env.system,
        messages,
        tools: toolSpecs(env.tools),
        behavior: env.behavior,
        signal: env.modelSignal,
        onDelta: deltaSink(state, env, turn),
      })
    } catch (error) {
      if (!tools || !(error instanceof AgentAbortedError)) throw error
      return { decision: 'aborted', at: Date.now(), tools }
    }
    if (tools) record.tools = tools
    fireHook(env.hooks, state, 'model:executed', { runId: state.runId, turn, model: state.limits.model ?? env.behavior.model, record })
    return record
  }, sessionTurns ? { sessionTurns } : undefined)
}

/** The session turn of a model response (`<run>-t<turn>-a`). */
function assistantTurn(runId: string, turn: number, response: ModelResponse, endedAt: number): SessionTurn {
  return { id: `${runId}-t${turn}-a`, runId, role: 'assistant', content: response.content, createdAt: endedAt, usage: response.usage, costUsd: response.costUsd, model: response.model }
}

/** Where a model step's deltas go: the `model:delta` hook of turn `turn`. */
function deltaSink(state: RunState, env: LoopEnv, turn: number): (delta: AttemptDelta) => void {
  return delta => { fireHook(env.hooks, state, 'model:delta', { runId: state.runId, turn, delta }) }
}

/** The run state the budget check of a model step sees: with the cost of the deferred calls it just ran. */
function withDeferredCost(state: RunState, tools: readonly ToolStepRecord[] | undefined): RunState {
  const cost = tools?.reduce((sum, record) => sum + (record.costUsd ?? 0), 0) ?? 0
  return cost === 0 ? state : { ...state, totals: { ...state.totals, costUsd: state.totals.costUsd + cost } }
}

const specLists = new WeakMap<LoopEnv['tools'], ToolSpec[]>()

/** The tools' specs, built once per tool map (a run's tools do not change while it runs). */
function toolSpecs(tools: LoopEnv['tools']): ToolSpec[] {
  let specs = specLists.get(tools)
  if (!specs || specs.length !== tools.size) specLists.set(tools, specs = [...tools.values()].map(tool => tool.spec))
  return specs
}

/** The tail budget of the `'tail'` strategy. */
function compactBudget(env: LoopEnv): number {
  return env.behavior.compactBudgetTokens ?? DEFAULT_COMPACT_BUDGET_TOKENS
}

/** Compacts the request of a model step that runs deferred calls (inside the step: no hook). */
function compactDeferred(messages: RunState['messages'], env: LoopEnv): RunState['messages'] {
  return env.behavior.compactStrategy === 'tail' ? compactTail(messages, compactBudget(env)).messages : messages
}

function compactMessages(state: RunState, env: LoopEnv): RunState['messages'] {
  if (env.behavior.compactStrategy !== 'tail') return state.messages
  const { messages, dropped } = compactTail(state.messages, compactBudget(env))
  if (dropped > 0) fireHook(env.hooks, state, 'compact', { runId: state.runId, turn: state.turn, droppedTurns: dropped })
  return messages
}

async function recordResponse(state: RunState, env: LoopEnv, response: ModelResponse, endedAt: number): Promise<void> {
  addToTotals(state.totals, response.usage, response.costUsd)
  state.totals.modelRequests += 1
  state.totals.turns += 1
  state.lastModelCostUsd = response.costUsd
  const text = textOf(response.content)
  if (text.length > 0) state.lastText = text
  appendMessage(state.messages, 'assistant', response.content)
  await env.session?.appendTurns([assistantTurn(state.runId, state.turn, response, endedAt)])
  await env.hooks.callHook('model:response', { runId: state.runId, turn: state.turn, response })
}

function isToolUse(block: ContentBlock): block is ToolUseBlock {
  return block.type === 'tool_use'
}

async function continueAfterResponse(state: RunState, env: LoopEnv, response: ModelResponse, carry: TurnCarry): Promise<LoopOutcome | undefined> {
  const calls = response.content.filter(isToolUse)
  if (response.truncatedToolUse === true && calls.length > 0) {
    await appendToolResults(state, env, state.turn, calls.map(call => ({ type: 'tool_result', toolUseId: call.id, content: TRUNCATED_TOOL_TEXT, isError: true })))
    return undefined
  }
  if (calls.length > 0 && canDeferCalls(env, calls)) {
    carry.deferred = await deferSafeCalls(state, env, calls)
    return undefined
  }
  if (calls.length > 0) return runTools(state, env, calls)
  switch (response.stopReason) {
    case 'pause_turn': return undefined
    case 'max_tokens': return { status: 'completed', reason: 'max_tokens: the response was cut at the output token limit' }
    case 'refusal': return { status: 'completed', reason: 'refusal: the model declined to continue' }
    case 'model_context_window_exceeded': return { status: 'limit', reason: 'model_context_window_exceeded: the conversation no longer fits the model context' }
    default: return { status: 'completed' }
  }
}

async function runTools(state: RunState, env: LoopEnv, calls: ToolUseBlock[], announced = false): Promise<LoopOutcome | undefined> {
  const outcome = await runToolPhase(state, env, calls, announced)
  state.totals.toolCalls += outcome.records.length
  for (const record of outcome.records) {
    if (record.usage) addToTotals(state.totals, record.usage, record.costUsd ?? 0)
    if (record.work) addWork(state.totals, record.work)
  }
  if (outcome.stoppedBy === 'suspend') return { status: 'suspended' }
  await appendToolResults(state, env, state.turn, outcome.results)
  if (outcome.stoppedBy === 'abort') return { status: 'aborted', reason: 'aborted' }
  return undefined
}

/** Records the results of a finished deferred phase as any tool phase's: totals, end hooks, the results turn. */
async function finishDeferredCalls(state: RunState, env: LoopEnv, deferred: DeferredCalls, records: readonly ToolStepRecord[]): Promise<void> {
  const finished = await deferredResults(state, env, deferred, records)
  state.totals.toolCalls += records.length
  for (const record of records) {
    if (record.usage) addToTotals(state.totals, record.usage, record.costUsd ?? 0)
    if (record.work) addWork(state.totals, record.work)
  }
  await appendToolResults(state, env, deferred.turn, finished)
}

/** Appends the tool results of turn `turn` as its results turn (`<run>-t<turn>-r`). */
async function appendToolResults(state: RunState, env: LoopEnv, turn: number, results: ToolResultBlock[]): Promise<void> {
  const content: ContentBlock[] = results
  appendMessage(state.messages, 'user', content)
  const turnRecord = { id: `${state.runId}-t${turn}-r`, runId: state.runId, role: 'user' as const, content, createdAt: env.journaledTime() }
  await env.session?.appendTurns([turnRecord])
  await env.hooks.callHook('tool-results:after', { runId: state.runId, turn, turnRecord })
}

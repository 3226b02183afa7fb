import type { Hookable } from 'hookable'
import type { DurableRuntime } from '../durable/runtime'
import { stepKey } from '../durable/runtime'
import type { StepKey } from '../durable/runtime'
import { AgentAbortedError } from '../errors/zidane-error'
import type { ToolUseBlock, Usage } from '../providers/content'
import { INTERRUPTED_TOOL_TEXT } from '../session/heal'
import type { Session } from '../session/session'
import type { ToolStateStore } from '../session/types'
import type { ToolContext, ToolDef, ToolResult } from '../tools/tool'
import { toToolResult } from '../tools/tool'
import { stageToolState } from '../tools/staged-tool-state'
import type { StagedToolState, ToolStateWrites } from '../tools/staged-tool-state'
import { fireHook } from './fire-hook'
import { validateToolInput } from './input-validator'
import { capToolResult } from './cap-tool-result'
import { persistLargeOutput } from './persist-output'
import type { RunState } from './run-state'
import type { AgentBehavior, AgentHooks, ToolCallInfo, ToolPermission } from './types'

/** A tool call's result as journaled: the result, and whether the call was interrupted by a crash or a suspend. */
export interface ToolStepRecord extends ToolResult {
  interrupted?: boolean
  /** Usage and cost a tool incurred (a sub-agent's), added to the run totals. */
  usage?: Usage
  costUsd?: number
  /** Work a sub-agent did (its model requests, turns and tool calls, its own children included), added to the run totals. */
  work?: { modelRequests: number; turns: number; toolCalls: number }
  /** When the call finished, read inside the step (journaled with it). */
  endedAt?: number
  /** Tool-state writes the call made, applied after its step (see `stageToolState`). */
  toolState?: ToolStateWrites
}

/** What executing tools needs from the agent. */
export interface ToolExecutionEnv {
  runtime: DurableRuntime
  tools: ReadonlyMap<string, ToolDef>
  hooks: Hookable<AgentHooks>
  behavior: AgentBehavior
  session: Session | undefined
  toolState: ToolStateStore | undefined
  extras: Readonly<Record<string, unknown>>
  canUseTool: ((call: ToolCallInfo) => ToolPermission | Promise<ToolPermission>) | undefined
  /** Aborts tools: fires on `abort()` at once and on `suspend()` after the grace period. */
  toolSignal: AbortSignal
  /** True once `suspend()` was called: no new tool call starts. */
  isSuspending: () => boolean
  /** Called when a step's body actually runs (not replayed): the replay of a resumed run is over. */
  markLive: () => void
}

/**
 * Starts one call: a journaled step, or the tool's own journaling for `journal: 'self'` tools. Returns the runtime's
 * promise untouched. With a tool-state `snapshot` (a store that can be staged), the call reads the snapshot and its
 * writes ride on the journaled record; the caller applies them after the step.
 */
export function startToolCall(state: RunState, env: ToolExecutionEnv, call: ToolUseBlock, snapshot?: ToolStateWrites, after?: readonly StepKey[]): Promise<ToolStepRecord> {
  const tool = env.tools.get(call.name)
  if (tool?.journal === 'self') return startSelfJournaled(state, env, call, tool)
  return env.runtime.step(toolStepKey(state, call), async attempt => {
    env.markLive()
    const startedAt = Date.now()
    if (attempt.resumed) fireHook(env.hooks, state, 'tool:resuming', { runId: state.runId, turn: state.turn, callId: call.id, name: call.name })
    const record = attempt.resumed && tool?.replay !== 'safe'
      ? { content: INTERRUPTED_TOOL_TEXT, isError: true, interrupted: true, endedAt: Date.now() }
      : await runStagedToolBody(state, env, call, tool, snapshot)
    fireHook(env.hooks, state, 'tool:executed', { runId: state.runId, turn: state.turn, callId: call.id, name: call.name, startedAt, endedAt: record.endedAt, isError: record.isError === true, interrupted: record.interrupted === true })
    return record
  }, { atMostOnce: tool?.replay !== 'safe', ...(after ? { after } : {}) })
}

/** The step key of a call that the runtime journals (`<run>/t<turn>/<call id>/tool`). */
export function toolStepKey(state: RunState, call: ToolUseBlock): StepKey {
  return stepKey(state.runId, 'tool', `t${state.turn}`, call.id)
}

/**
 * Runs a call's body now, outside a step of its own (a deferred `replay: 'safe'` call, inside the next model step's
 * closure): against `snapshot` when the tool state can be staged, its writes carried on the record.
 */
export async function executeCallNow(state: RunState, env: ToolExecutionEnv, call: ToolUseBlock, snapshot: ToolStateWrites | undefined): Promise<ToolStepRecord> {
  const startedAt = Date.now()
  const record = await runStagedToolBody(state, env, call, env.tools.get(call.name), snapshot)
  fireHook(env.hooks, state, 'tool:executed', { runId: state.runId, turn: state.turn, callId: call.id, name: call.name, startedAt, endedAt: record.endedAt, isError: record.isError === true, interrupted: record.interrupted === true })
  return record
}

/** Runs a call's body against its staged tool state (when there is a snapshot); its record carries the writes and its end time. */
async function runStagedToolBody(state: RunState, env: ToolExecutionEnv, call: ToolUseBlock, tool: ToolDef | undefined, snapshot: ToolStateWrites | undefined): Promise<ToolStepRecord & { endedAt: number }> {
  const staged = snapshot ? stageToolState(snapshot) : undefined
  const record = await runToolBody(state, env, call, tool, staged)
  const writes = staged?.writes()
  return { ...record, endedAt: Date.now(), ...(writes ? { toolState: writes } : {}) }
}

function startSelfJournaled(state: RunState, env: ToolExecutionEnv, call: ToolUseBlock, tool: ToolDef): Promise<ToolStepRecord> {
  const invalid = validateToolInput(tool, call.input)
  if (invalid !== undefined) return Promise.resolve({ content: invalid, isError: true })
  const output = tool.execute(call.input, buildToolContext(state, env, call))
  return output as Promise<ToolStepRecord>
}

async function runToolBody(state: RunState, env: ToolExecutionEnv, call: ToolUseBlock, tool: ToolDef | undefined, staged: StagedToolState | undefined): Promise<ToolStepRecord> {
  if (!tool) return { content: `Unknown tool: ${call.name}. Available tools: ${[...env.tools.keys()].join(', ')}`, isError: true }
  const denial = env.canUseTool ? await checkDenyRules(env.canUseTool, call) : undefined
  if (denial !== undefined) return { content: denial, isError: true }
  const invalid = validateToolInput(tool, call.input)
  if (invalid !== undefined) return { content: invalid, isError: true }
  try {
    const result = toToolResult(await tool.execute(call.input, buildToolContext(state, env, call, staged)))
    const target = env.behavior.persistOutput ?? env.behavior.persistDir
    // An output that cannot be kept (a link planted in its place) is capped like any other: the call itself succeeded.
    const persisted = target === undefined ? result : await persistLargeOutput(result, target, state.sessionId, call.id).catch(() => result)
    return capToolResult(persisted, env.runtime.defaults.maxToolResultBytes)
  } catch (error) {
    if (env.runtime.isControlError(error)) throw error
    return failedCall(env, tool, error)
  }
}

function failedCall(env: ToolExecutionEnv, tool: ToolDef, error: unknown): ToolStepRecord {
  if (env.toolSignal.aborted) {
    // Stopped by abort or by the end of a suspend's grace period: unsafe calls record the interrupted text,
    // safe calls are left unrecorded so the next process runs them again.
    if (env.isSuspending() && tool.replay === 'safe') throw new AgentAbortedError('Tool call stopped by suspend.', error)
    return { content: INTERRUPTED_TOOL_TEXT, isError: true, interrupted: true }
  }
  const message = error instanceof Error ? error.message : String(error)
  return { content: `Tool ${tool.spec.name} failed: ${message}`, isError: true }
}

async function checkDenyRules(canUseTool: NonNullable<ToolExecutionEnv['canUseTool']>, call: ToolUseBlock): Promise<string | undefined> {
  const permission = await canUseTool({ callId: call.id, name: call.name, input: call.input })
  if (typeof permission === 'object') return `Permission denied for ${call.name}: ${permission.deny}`
  return undefined
}

/** Builds the context a tool's `execute` receives; a staged call sees its staged tool state. */
export function buildToolContext(state: RunState, env: ToolExecutionEnv, call: ToolUseBlock, staged?: StagedToolState): ToolContext {
  const toolState = env.tools.get(call.name)?.usesToolState === false ? undefined : staged?.store ?? env.toolState
  const context: ToolContext = {
    callId: call.id,
    toolName: call.name,
    sessionId: state.sessionId,
    runId: state.runId,
    turn: state.turn,
    depth: state.depth,
    signal: env.toolSignal,
    runtime: env.runtime,
    hooks: env.hooks,
    emit: (name, payload) => env.hooks.callHook('tool:event', { runId: state.runId, turn: state.turn, callId: call.id, toolName: call.name, name, payload }),
    extras: env.extras,
    ...(toolState ? { toolState } : {}),
    ...(env.session ? { session: env.session } : {}),
  }
  return context
}

import type { JsonObject } from '../json'
import type { DurableRuntime } from '../durable/runtime'
import type { ToolResultContent } from '../providers/content'
import type { ToolSpec } from '../providers/provider'
import type { ToolStateStore } from '../session/types'
import type { Session } from '../session/session'
import type { Hookable } from 'hookable'
import type { AgentHooks } from '../agent/types'

/** What a tool returns: text, or structured blocks. */
export type ToolOutput = string | ToolResultContent[]

/** A tool's result as the loop records it. */
export interface ToolResult {
  content: ToolOutput
  isError?: boolean
}

/** Events a tool can emit while it runs (forwarded to hooks by the loop). */
export type ToolEventSink = (name: string, payload: JsonObject) => void | Promise<void>

/** What the loop hands a tool's `execute`: the call, the run, the runtime, and an abort signal. */
export interface ToolContext {
  readonly callId: string
  readonly toolName: string
  readonly sessionId: string
  readonly runId: string
  readonly turn: number
  /** Sub-agent depth of the run: 0 for a top-level run. */
  readonly depth: number
  readonly signal: AbortSignal
  readonly runtime: DurableRuntime
  readonly toolState?: ToolStateStore
  /** Emits an event on the agent's hook bus. */
  readonly emit: ToolEventSink
  /** The run's session, when the agent has one that persists. */
  readonly session?: Session
  /** The agent's hook bus (tools that merge or replay events register here). */
  readonly hooks: Hookable<AgentHooks>
  /** Host-provided values (workspace root, the agent itself, …). */
  readonly extras: Readonly<Record<string, unknown>>
}

/**
 * A tool the model can call. `inputSchema` is a JSON schema; input is validated before `execute`.
 * `replay: 'safe'` marks a tool that may run again after a crash (running it twice does the same as once);
 * every other tool in flight at a crash gets the interrupted text instead. `isConcurrencySafe` lets calls run
 * together with other safe calls. `journal: 'self'` means the tool records its own steps (awakeable-backed and
 * spawn tools): the loop does not wrap it in a step, and on Restate its `execute` must return the runtime's
 * promise untouched so concurrent calls can be joined. `usesToolState: false` says the tool never reads or writes
 * `ctx.toolState` (it gets none): the loop reads no tool state before a group of calls of only such tools (on Restate,
 * a state read and its round trip per run).
 */
export interface ToolDef {
  spec: ToolSpec
  execute(input: JsonObject, ctx: ToolContext): Promise<ToolOutput | ToolResult>
  replay?: 'safe'
  isConcurrencySafe?: boolean | ((input: JsonObject) => boolean)
  journal?: 'self'
  usesToolState?: false
}

/** Whether any of `calls` is of a tool that may use `ctx.toolState` (an unknown tool counts: it is reported anyway). */
export function callsUseToolState(tools: ReadonlyMap<string, ToolDef>, calls: ReadonlyArray<{ name: string }>): boolean {
  return calls.some(call => tools.get(call.name)?.usesToolState !== false)
}

/** Normalizes what `execute` returned into a `ToolResult`. */
export function toToolResult(output: ToolOutput | ToolResult): ToolResult {
  if (typeof output === 'string' || Array.isArray(output)) return { content: output }
  return output
}

/** An error a tool throws to report a clear, model-visible failure (it becomes a tool_result with `isError`). */
export class ToolError extends Error {
  readonly code: string
  constructor(message: string, code = 'tool_failed') {
    super(message)
    this.name = 'ToolError'
    this.code = code
  }
}

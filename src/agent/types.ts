import type { ToolStateStore } from '../session/types'
import type { JsonObject } from '../json'
import type { DurableRuntime, SteeredMessage, SteeringInbox } from '../durable/runtime'
import type { ModelResponse, Provider, ThinkingConfig } from '../providers/provider'
import type { Usage } from '../providers/content'
import type { AttemptDelta } from './model-attempt'
import type { ModelStepRecord } from './model-step'
import type { Session } from '../session/session'
import type { NewSessionEvent } from '../session/session-events'
import type { RunStatus, SessionTurn } from '../session/types'
import type { ToolDef, ToolResult } from '../tools/tool'
import type { OutputWriter } from './persist-output'

/** How a run ended. `suspended` runs keep their checkpoint and can be resumed by another process. */
export type AgentRunStatus = 'completed' | 'aborted' | 'timeout' | 'limit' | 'error' | 'suspended'

/** The outcome of `agent.run()`: status, counts, tokens and cost (children included), wall time and final text. */
export interface AgentStats {
  runId: string
  sessionId: string
  status: AgentRunStatus
  suspended: boolean
  turns: number
  toolCalls: number
  modelRequests: number
  usage: Usage
  costUsd: number
  wallMs: number
  startedAt: number
  endedAt: number
  text: string
  /** Why the run stopped when it did not complete (limit hit, error message). */
  reason?: string
  /** True when this run continued a run a dead process left. */
  resumed?: boolean
}

/** What `compactStrategy` does when the history is over budget. `'tail'` drops the oldest turns, keeping tool pairs intact. */
export type CompactStrategy = 'none' | 'tail'

/** Loop behaviour and limits. Every field is optional; defaults are documented per field. */
export interface AgentBehavior {
  /** Model turns per run before the run stops with status `limit`. Default 50. */
  maxTurns?: number
  /** Wall-clock budget of a run in ms, counted from its first start (a resumed run keeps counting). Default: none. */
  maxWallMs?: number
  /** Cost budget in USD, children included; checked before every model request. Default: none. */
  maxCostUsd?: number
  /** Concurrency-safe tool calls run together, at most this many at once. Default 10. */
  maxConcurrentTools?: number
  /** Ask the provider to place prompt-cache breakpoints. Default false. */
  cache?: boolean
  /** Default `'none'`. */
  compactStrategy?: CompactStrategy
  /** Estimated-token budget of the history sent to the model when compacting. Default 100000. */
  compactBudgetTokens?: number
  /** Directory for tool outputs over 256 KiB (`<persistDir>/<session>/tool-results/<callId>.txt`). Default: none. */
  persistDir?: string
  /** Writes tool outputs over 256 KiB instead of `persistDir` (the services: into the workspace, through its sandbox). */
  persistOutput?: OutputWriter
  /** Model id override for every request of the run. */
  model?: string
  maxTokens?: number
  thinking?: ThinkingConfig
  /** Retries of a retryable provider failure inside one model step. Default 2. */
  modelRetries?: number
  /** First backoff between model retries in ms (doubles). Default 500. */
  modelRetryDelayMs?: number
  /**
   * How long an approval (`canUseTool` → `'ask'`) waits for a person; past it the approval expires and the call is
   * denied (the model gets an error result saying so). Default: no deadline.
   */
  approvalTimeoutMs?: number
}

/** A tool call as permission checks see it. */
export interface ToolCallInfo { callId: string; name: string; input: JsonObject }

/** A permission decision: run it, ask a human first, or refuse with a reason the model sees. */
export type ToolPermission = 'allow' | 'ask' | { deny: string }

/** The kinds of question an interaction asks. */
export type InteractionKind = 'ask_user' | 'present_plan' | 'approval'

/** A question for a human, parked on an awakeable whose id the host must hand to whoever answers. */
export interface InteractionRequest {
  kind: InteractionKind
  sessionId: string
  runId: string
  callId: string
  question: string
  options?: string[]
  awakeable: { id: string }
  /** The call an approval is about (kind `approval` only): the tool's name and its input. */
  tool?: { name: string; input: JsonObject }
  /** When the question expires (epoch ms, from the durable clock), if it has a deadline. */
  expiresAt?: number
  /**
   * True when a resumed run announces again a question an earlier process sent and nobody has answered yet (same
   * awakeable id): once per process that reaches the wait. Absent on the first announcement.
   */
  resumed?: boolean
}

/**
 * Notifies a human of a question. Answer it with `runtime.resolveAwakeable(request.awakeable.id, answer)`. Runs once
 * per question, inside a step, and again (with `resumed: true`, outside any step) in each later process that resumes
 * the run while the question is unanswered.
 */
export type RequestInteraction = ((request: InteractionRequest) => void | Promise<void> | InteractionDone | Promise<InteractionDone>) & {
  /**
   * `'self'`: the host journals what it does itself (on Restate: state writes and calls through the object context,
   * which may not happen inside a step). The loop then calls it outside any step, on the first execution and on every
   * replay, right before the run waits; a function it returns is called once the answer arrived (to unlist the
   * question). Otherwise it is called once, inside the journaled notification step.
   */
  journal?: 'self'
}

/** What a self-journaling host is told once the wait ended: `timedOut` when the deadline passed first. */
export type InteractionDone = (outcome?: { timedOut: boolean }) => Promise<void>

/** `durable` as `createAgent` takes it: a bare runtime (means `onInterrupted: 'heal'`) or the runtime with a policy. */
export type DurableOption = DurableRuntime | { runtime: DurableRuntime; onInterrupted?: 'resume' | 'heal' }

/** Options of `createAgent`. Give `session` or `sessionId` (or neither, for a fresh in-memory session). */
export interface CreateAgentOptions {
  provider: Provider
  tools?: readonly ToolDef[]
  system?: string
  session?: Session
  /**
   * Where tools keep state across runs (`ctx.toolState`). Default: the durable runtime's own store
   * (`durable.stores.toolState`). On Restate, pass `restateToolStateStore(ctx, { key })` to use another state key.
   */
  toolState?: ToolStateStore
  sessionId?: string
  durable?: DurableOption
  behavior?: AgentBehavior
  hooks?: Partial<AgentHooks>
  /** Deny rules and approvals, consulted when a call actually runs. */
  canUseTool?: (call: ToolCallInfo) => ToolPermission | Promise<ToolPermission>
  /** How approval questions (`canUseTool` → `'ask'`) reach a human. */
  requestInteraction?: RequestInteraction
  /**
   * Where the run takes messages steered into its session, at every turn boundary (see {@link SteeringInbox}).
   * Default: the durable runtime's own (`durable.steering`: the SQLite runtime has one), else none.
   */
  steering?: SteeringInbox
  /** Sub-agent depth of this agent: 0 for top level. */
  depth?: number
  /** Host values handed to tools as `ctx.extras`. */
  toolExtras?: Readonly<Record<string, unknown>>
}

/** Options of one `agent.run()`. `model` and `maxTurns` override the behaviour for this run (and carry over on resume). */
export interface RunOptions {
  prompt: string
  signal?: AbortSignal
  model?: string
  maxTurns?: number
  /**
   * The trace the host exports this run's spans in (32 hex digits), kept in the run record (`SessionRun.traceId`) so a
   * viewer can link the run to it. It lands in durable state: it must be the same on every replay.
   */
  traceId?: string
}

/** Payload shared by every child event: which child run, at which depth, under which parent call. */
export interface ChildEventBase { label: string; depth: number; parentRunId: string; parentCallId: string; childRunId: string }

/**
 * The typed hook list. Hooks are awaited in order; a throwing hook fails the run. On a replay, hooks fire again
 * for replayed steps (dedupe by `callId`/`turn` or gate on the replay tracker).
 */
export interface AgentHooks {
  'run:start': (event: { runId: string; sessionId: string; prompt: string; resumed: boolean }) => void | Promise<void>
  'turn:start': (event: { runId: string; turn: number }) => void | Promise<void>
  'model:request': (event: { runId: string; turn: number; messageCount: number; toolCount: number }) => void | Promise<void>
  /**
   * A piece of the response while the model step runs (never on a replay). `delta.attempt` is new for each request
   * attempt (a retry, a re-run after a crash): deltas of an earlier attempt of the same turn are superseded.
   * `delta.offset` places the piece within the attempt's text of its kind.
   */
  'model:delta': (event: { runId: string; turn: number; delta: AttemptDelta }) => void | Promise<void>
  'model:response': (event: { runId: string; turn: number; response: ModelResponse }) => void | Promise<void>
  /**
   * The model step ran in this process, inside its step, right before its record is journaled: once per real execution
   * and never on a replay (a replayed step's record comes from the journal). The hook for a ledger of what the provider
   * billed: a step re-run after a crash that cut it off fires again, as the provider was asked again. `model` is the
   * model the request named (the run's or the behaviour's), when one was named. Fired without waiting.
   */
  'model:executed': (event: { runId: string; turn: number; model: string | undefined; record: ModelStepRecord }) => void | Promise<void>
  'tool:start': (event: { runId: string; turn: number; callId: string; name: string; input: JsonObject }) => void | Promise<void>
  'tool:resuming': (event: { runId: string; turn: number; callId: string; name: string }) => void | Promise<void>
  'tool:end': (event: { runId: string; turn: number; callId: string; name: string; result: ToolResult; interrupted: boolean }) => void | Promise<void>
  /**
   * A tool call's step ran in this process, inside its step (never on a replay): when its code started and ended, and
   * how it ended. Calls of tools that journal themselves (`journal: 'self'`) run outside any step and do not fire it.
   * Fired without waiting.
   */
  'tool:executed': (event: { runId: string; turn: number; callId: string; name: string; startedAt: number; endedAt: number; isError: boolean; interrupted: boolean }) => void | Promise<void>
  /** An event a tool emitted while it runs (`ctx.emit(name, payload)`): progress, partial output. */
  'tool:event': (event: { runId: string; turn: number; callId: string; toolName: string; name: string; payload: JsonObject }) => void | Promise<void>
  'tool-results:after': (event: { runId: string; turn: number; turnRecord: SessionTurn }) => void | Promise<void>
  'turn:end': (event: { runId: string; turn: number }) => void | Promise<void>
  /** Steered messages reached the run: they are the user turn `turnId`, sent with this turn's model request. */
  'steering': (event: { runId: string; turn: number; turnId: string; messages: SteeredMessage[] }) => void | Promise<void>
  'compact': (event: { runId: string; turn: number; droppedTurns: number }) => void | Promise<void>
  'interaction:request': (event: InteractionRequest) => void | Promise<void>
  'run:end': (event: { runId: string; stats: AgentStats }) => void | Promise<void>
  /**
   * An event of the session's log, in the shape the deployment's SSE stream and the CLI's `--stream-json` use
   * (without `seq`: a log numbers it). Derived from the session's writes, so it fires again on a replay.
   */
  'session:event': (event: NewSessionEvent) => void | Promise<void>
  'resume:mismatch': (event: { runId: string; sessionId: string; reason: string }) => void | Promise<void>
  'replay:done': (event: Record<string, never>) => void | Promise<void>
  'child:run:start': (event: ChildEventBase & { task: string }) => void | Promise<void>
  'child:turn:end': (event: ChildEventBase & { turn: number }) => void | Promise<void>
  'child:tool:start': (event: ChildEventBase & { callId: string; name: string }) => void | Promise<void>
  'child:tool:end': (event: ChildEventBase & { callId: string; name: string; isError: boolean }) => void | Promise<void>
  'child:run:end': (event: ChildEventBase & { status: RunStatus; stats: AgentStats }) => void | Promise<void>
}

/** The names of every hook. */
export type AgentHookName = keyof AgentHooks

/** A created agent. One run at a time; `abort()` ends the current run for good, `suspend()` keeps its checkpoint. */
export interface Agent {
  readonly hooks: import('hookable').Hookable<AgentHooks>
  readonly runtime: DurableRuntime
  run(options: RunOptions & { runId?: string }): Promise<AgentStats>
  /** Continues an interrupted run by hand; `null` when there is nothing to continue (or the history no longer matches). */
  resume(options?: { signal?: AbortSignal }): Promise<AgentStats | null>
  abort(reason?: string): void
  suspend(options?: { graceMs?: number }): Promise<void>
  /** The agent's session, loaded or created on first use. */
  session(): Promise<Session>
}

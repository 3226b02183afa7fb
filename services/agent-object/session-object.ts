import * as restate from '@restatedev/restate-sdk'
import { createAgent } from 'zidane'
import type { AgentStats, CreateAgentOptions, ToolDef } from 'zidane'
import { flushSessionHeader, heldSessionHeader, isRestateCancellation, watchSteps } from 'zidane/restate'
import type { StoredSessionHeader } from 'zidane/restate'
import { createSession, loadSession } from 'zidane/session'
import { demoTools } from '../demo-tools'
import type { CurrentInvocation, PendingQuestion, SessionInvocation, SessionRunRequest, SessionRunResult, SessionView, SessionViewRequest } from '../../contract/session'
import { CURRENT_INVOCATION_STATE_KEY, SESSION_SERVICE, SPAWN_TOOL } from '../../contract/session'
import { publishAgentDeltas } from '../live/agent-live'
import { traceAgentRun } from '../telemetry/trace-agent'
import { tenantOfSessionKey } from '../workspace'
import { createBuiltinTools } from 'zidane/tools'
import { runToolSet } from '../run-settings'
import { agentHandlerOptions, agentOutputs, agentRuntime, agentSpawnTool } from '../agent-deps'
import { mcpRunTools } from '../mcp-servers'
import type { AskUser } from '../mcp-elicitation'
import type { AgentDeps } from '../agent-deps'
import { policyPermission, restateApprovals } from './approvals'
import { closeOpenQuestions } from './close-questions'
import { withErrorBoundary } from '../handler-boundary'
import type { HandlerEnding } from '../handler-boundary'
import { inboxSteering, takeForDelivery } from './inbox-steering'
import { PENDING_QUESTIONS_KEY, questionActivity } from './pending-questions'
import type { QuestionActivity } from './pending-questions'
import { journalRunStart, runStartClock, startingAt } from './run-start'
import type { RunStart } from './run-start'
import { INTERACTION_TOOL_NAMES, parkQuestion, restateInteractionTools } from './restate-interaction-tools'
import { readSessionView } from './session-view'
import { CANCELLED_CALL_TEXT, endKilledRuns, endRunningRuns, FAILED_CALL_TEXT } from './run-endings'
import type { RunsEnding } from './run-endings'
import { recordedSessionStore } from '../event-log/session-events'
import type { EventSink } from '../event-log/session-events'
import { createSessionLogSync } from '../event-log/session-log-sync'
import { readSessionChanges } from './session-changes'
import { indexRunEnd, updateSessionIndex } from './index-updates'
import { eraseSession } from './session-erase'
import type { EraseSessionRequest } from '../../contract/session-index'

/** What the session object gets besides the agents' dependencies. */
export interface SessionObjectOptions {
  /** Runs first in every `run`, before anything is journaled: a test's extra journal entries (a next release's fixture). */
  beforeRun?: (ctx: restate.ObjectContext) => Promise<void>
}

async function runSession(deps: AgentDeps, ctx: restate.ObjectContext, request: SessionRunRequest): Promise<SessionRunResult> {
  const offered = offeredToolNames(deps)
  const { header, ...start } = await journalRunStart(deps, ctx, offered)
  const invocation: CurrentInvocation = { invocationId: ctx.request().id, status: 'running', startedAt: start.startedAt }
  ctx.set(CURRENT_INVOCATION_STATE_KEY, invocation)
  updateSessionIndex(ctx, { status: 'running', lastActivityAt: invocation.startedAt })
  // One sink per invocation, whichever store records the events: the log reads them from the session's state.
  const events = createSessionLogSync(ctx, deps.doorbell)
  const questions = questionActivity()
  try {
    return await runToItsEnd(deps, ctx, request, { ...start, offered, questions, header }, invocation, events)
  } finally {
    // Outside the journal: the session's warm file workers may make room for other sessions' from now on.
    deps.tools.settle?.(start.root)
  }
}

/** The run and its end's records, or the records of how it ended otherwise (`recordEnding`). */
async function runToItsEnd(deps: AgentDeps, ctx: restate.ObjectContext, request: SessionRunRequest, start: AgentStart, invocation: CurrentInvocation, events: EventSink): Promise<SessionRunResult> {
  const { questions } = start
  return withErrorBoundary(async () => {
    const stats = await runAgent(deps, ctx, request, events, start)
    events.flush()
    // Questions this invocation listed and left (none unless it listed one): an earlier one's were closed at its start.
    if (questions.listed) await closeOpenQuestions(ctx, 'finished')
    ctx.set(CURRENT_INVOCATION_STATE_KEY, { ...invocation, status: 'completed', endedAt: stats.endedAt })
    // The header the run's store wrote last: no state read of its own.
    await indexRunEnd(ctx, stats.endedAt, heldSessionHeader(ctx))
    return { sessionId: ctx.key, status: stats.status, text: stats.text, stats }
  }, async (ending) => {
    try {
      await recordEnding(ctx, invocation, ending, events)
    } finally {
      events.flush() // the run's events and the clean-up's, even when the clean-up failed
    }
  })
}

/**
 * Records how an invocation ended for good (cancelled, or a terminal failure): its questions are closed, the
 * invocation record says so, and the session's unfinished runs end with that status, their open tool calls closed so
 * the history stays valid. Every timestamp comes from the durable clock.
 */
async function recordEnding(ctx: restate.ObjectContext, invocation: CurrentInvocation, ending: HandlerEnding, events: EventSink): Promise<void> {
  // A second cancel (the spawn tool cancels its own invocation to reach its children) can surface at an await of
  // this clean-up: it is journaled, so trying again is deterministic; three tries cover every cancel a run sends.
  for (let attempt = 1; ; attempt++) {
    try {
      return await recordEndingOnce(ctx, invocation, ending, events)
    } catch (error) {
      if (!isRestateCancellation(error) || attempt >= 3) throw error
    }
  }
}

async function recordEndingOnce(ctx: restate.ObjectContext, invocation: CurrentInvocation, ending: HandlerEnding, events: EventSink): Promise<void> {
  // The run's store may hold its header back (one write per boundary): the clean-up below reads the state afresh.
  flushSessionHeader(ctx)
  const endedAt = await ctx.date.now()
  await closeOpenQuestions(ctx, ending.kind === 'cancelled' ? 'cancelled' : 'failed')
  const status = ending.kind === 'cancelled' ? 'cancelled' : 'failed'
  const reason = ending.kind === 'cancelled' ? 'cancelled' : ending.reason
  ctx.set(CURRENT_INVOCATION_STATE_KEY, { ...invocation, status, endedAt, ...(ending.kind === 'failed' ? { error: reason } : {}) })
  await closeUnfinishedRuns(ctx, events, { status, reason, endedAt, text: ending.kind === 'cancelled' ? CANCELLED_CALL_TEXT : FAILED_CALL_TEXT })
  await indexRunEnd(ctx, endedAt)
}

/** Ends the session's running runs with `status`, closing their open tool calls with `text`. */
async function closeUnfinishedRuns(ctx: restate.ObjectContext, events: EventSink, end: RunsEnding): Promise<void> {
  const clock = { now: () => end.endedAt }
  const session = await loadSession(recordedSessionStore(ctx, events, { clock, promises: restate.RestatePromise }), ctx.key, { clock })
  if (session) await endRunningRuns(session, end)
}

/** What `runSession` decided before the agent runs: the journaled start, the tools offered, the question activity, the header read with the start. */
interface AgentStart extends RunStart {
  offered: readonly string[]
  questions: QuestionActivity
  header: StoredSessionHeader | null
}

async function runAgent(deps: AgentDeps, ctx: restate.ObjectContext, request: SessionRunRequest, events: EventSink, start: AgentStart): Promise<AgentStats> {
  const { config } = deps
  const { settings, root, questions } = start
  // The invocation id in the seed: ids never repeat between two runs of one session (tools use them as idempotency keys).
  // A new session's header waits for the prompt turn's header write (a failure's clean-up flushes it first).
  const store = recordedSessionStore(ctx, events, { promises: restate.RestatePromise, clock: runStartClock(ctx, start.startedAt), header: start.header, deferNewSession: true })
  const durable = startingAt(agentRuntime(ctx, deps, `${ctx.key}:${ctx.request().id}`, store), start.startedAt)
  const session = (await loadSession(store, ctx.key)) ?? (await createSession({ id: ctx.key, store }))
  // Only when an earlier invocation was killed: the new commands it issues are on no other run's path.
  await endKilledRuns(ctx, session, config.maxAttempts, start.startedAt)
  const spawn = agentSpawnTool(ctx, events, settings, request.policy, {
    onAbort: () => ctx.invocation(ctx.request().id).cancel(),
    limits: { maxChildrenPerTurn: settings.maxChildrenPerTurn, maxChildrenPerTree: settings.maxChildrenPerRun, ...(settings.maxCostUsd ? { maxCostUsd: settings.maxCostUsd } : {}) },
  })
  // A server's request for input waits as a question, as ask_user's do.
  const askUser: AskUser = (question, toolCtx) => parkQuestion(ctx, 'ask_user', question, undefined, toolCtx, settings.questionTimeoutMs, questions)
  const mcpTools = await mcpRunTools(ctx, deps.mcp, settings, tenantOfSessionKey(ctx.key), root, askUser)
  // Each step is awaited with the steering signal: the check at a boundary journals nothing of its own. Before a wait
  // outside any step, the session's header is written: GET shows what led to the wait.
  const steering = inboxSteering(ctx, { beforeWaitOutsideSteps: () => flushSessionHeader(ctx) })
  watchSteps(durable, steering.watchStep)
  const approvals = approvalOptions(ctx, request, start, events)
  const agent = createAgent({
    provider: deps.provider,
    tools: steering.watchTools([...runTools(deps, ctx, start, spawn), ...mcpTools]),
    durable,
    session,
    ...approvals,
    ...(approvals.requestInteraction ? { requestInteraction: steering.watchInteraction(approvals.requestInteraction) } : {}),
    steering,
    behavior: { ...(settings.approvalTimeoutMs ? { approvalTimeoutMs: settings.approvalTimeoutMs } : {}), compactStrategy: 'tail', compactBudgetTokens: settings.compactBudgetTokens, ...agentOutputs(deps, root, ctx.key), maxTurns: request.maxTurns ?? settings.maxTurns, ...(settings.maxCostUsd ? { maxCostUsd: settings.maxCostUsd } : {}) },
  })
  publishAgentDeltas(agent, { sessionKey: ctx.key }, deps.liveHub)
  // Traces: spans when exported (docs/traces.md); the trace id lands in the run record either way.
  const traceId = traceAgentRun(agent, deps.tracing, ctx.request(), { sessionKey: ctx.key, agentName: 'zidane', provider: deps.provider })
  const model = request.model ?? settings.model
  return agent.run({ prompt: request.prompt, signal: ctx.request().attemptCompletedSignal, traceId, ...(model ? { model } : {}), ...(request.maxTurns ? { maxTurns: request.maxTurns } : {}) })
}

/** The names of the tools this composition's selection offers a session run: the built-ins, the demo tools, the questions, `spawn`. */
function offeredToolNames(deps: AgentDeps): string[] {
  return deps.tools.offered(deps.config.workspaceRoot, [...(deps.config.demoTools ? demoTools().map(tool => tool.spec.name) : []), ...INTERACTION_TOOL_NAMES, SPAWN_TOOL])
}

/** The run's tools: those its journaled settings offer, among the candidates (those {@link offeredToolNames} names). */
function runTools(deps: AgentDeps, ctx: restate.ObjectContext, start: AgentStart, spawn: ToolDef): ToolDef[] {
  const { settings, offered, root } = start
  // The demo tools the run started with stay candidates (refused when this process no longer serves them).
  const withDemoTools = deps.config.demoTools || demoTools().some(tool => settings.tools.includes(tool.spec.name))
  const questions = restateInteractionTools(ctx, { activity: start.questions, ...(settings.questionTimeoutMs ? { timeoutMs: settings.questionTimeoutMs } : {}) })
  const candidates = [...createBuiltinTools(deps.tools.options(root, tenantOfSessionKey(ctx.key))), ...(withDemoTools ? demoTools() : []), ...questions, spawn]
  return runToolSet(deps.tools, candidates, settings, offered)
}

/** The operator's (as the run's settings hold it) and the prompt's approval policy and how its questions reach a person (none without a policy). */
function approvalOptions(ctx: restate.ObjectContext, request: SessionRunRequest, start: AgentStart, events: EventSink): Pick<CreateAgentOptions, 'canUseTool' | 'requestInteraction'> {
  const { settings } = start
  const canUseTool = policyPermission({ approve: settings.approveTools, deny: settings.denyTools }, request.policy)
  // The run waits on a person: the events that led to the question reach the log first.
  return canUseTool ? { canUseTool, requestInteraction: restateApprovals(ctx, { ...(settings.approvalTimeoutMs ? { timeoutMs: settings.approvalTimeoutMs } : {}), beforeWait: () => events.flush(), activity: start.questions }) } : {}
}

/**
 * `deliver` (exclusive, sent by the inbox after it saved a message, so it runs once the current run ended): takes the
 * messages no run took at a turn boundary and runs them as one prompt; with none left it ends at once (null) and
 * touches nothing of the session.
 */
async function deliverSteering(deps: AgentDeps, ctx: restate.ObjectContext): Promise<SessionRunResult | null> {
  const texts = await takeForDelivery(ctx)
  if (texts.length === 0) return null
  return runSession(deps, ctx, { prompt: texts.join('\n\n') })
}

/** What the shared `get` handler returns: the header, usage, pending questions and one page of turns, read without blocking a running invocation. */
async function readView(ctx: restate.ObjectSharedContext, request: SessionViewRequest | null): Promise<SessionView> {
  const pending = (await ctx.get<PendingQuestion[]>(PENDING_QUESTIONS_KEY)) ?? []
  const invocation = await ctx.get<CurrentInvocation>(CURRENT_INVOCATION_STATE_KEY)
  return readSessionView(ctx, request ?? {}, pending, invocation)
}

/** Reads are not worth keeping once answered: Restate drops their journal at once, so polling piles up nothing. */
const unretained = { journalRetention: 0, idempotencyRetention: 0 }
/**
 * The session's state grows with its turns, and a run or a read uses a bounded part of it (the header, the turns after
 * the compaction checkpoint, one page): lazy state fetches what is read instead of shipping every turn to each invocation.
 */
const lazy = { enableLazyState: true }

/**
 * The agent session: one virtual object per session key (`<tenant>~<sessionId>`). `run` is exclusive (one run at
 * a time; later prompts queue), `deliver` (exclusive) runs steered messages no run took, `erase` (exclusive) deletes
 * the session ({@link eraseSession}); `get`, `invocation`,
 * `pending` and `changes` (what the session's event log derives its events from) are shared and never block a
 * running invocation. Its runs' attempts are bounded (`ZIDANE_MAX_ATTEMPTS`).
 */
export function sessionObject(deps: AgentDeps, options: SessionObjectOptions = {}) {
  const agent = { ...agentHandlerOptions(deps.config), ...lazy }
  const { beforeRun } = options
  return restate.object({
    name: SESSION_SERVICE,
    handlers: {
      run: restate.handlers.object.exclusive(agent, async (ctx: restate.ObjectContext, request: SessionRunRequest) => {
        await beforeRun?.(ctx)
        return runSession(deps, ctx, request)
      }),
      deliver: restate.handlers.object.exclusive(agent, async (ctx: restate.ObjectContext) => deliverSteering(deps, ctx)),
      erase: restate.handlers.object.exclusive(lazy, async (ctx: restate.ObjectContext, request: EraseSessionRequest | null) => eraseSession(ctx, request, deps.config.workspaceRoot)),
      get: restate.handlers.object.shared({ ...unretained, ...lazy }, readView),
      invocation: restate.handlers.object.shared(unretained, async (ctx: restate.ObjectSharedContext): Promise<SessionInvocation> => (await ctx.get<CurrentInvocation>(CURRENT_INVOCATION_STATE_KEY)) ?? null),
      pending: restate.handlers.object.shared(unretained, async (ctx: restate.ObjectSharedContext): Promise<PendingQuestion[]> => (await ctx.get<PendingQuestion[]>(PENDING_QUESTIONS_KEY)) ?? []),
      changes: restate.handlers.object.shared({ ...unretained, ...lazy }, readSessionChanges),
    },
    options: { inactivityTimeout: deps.config.inactivityTimeoutMs, abortTimeout: deps.config.abortTimeoutMs },
  })
}

/** The session object's type, for typed clients. */
export type SessionObject = ReturnType<typeof sessionObject>

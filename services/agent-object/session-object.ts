import * as restate from '@restatedev/restate-sdk'
import { createAgent } from 'zidane'
import type { AgentStats } from 'zidane'
import { isRestateCancellation, restateRuntime, restateSessionStore, restateSpawnTool } from 'zidane/restate'
import { createSession, loadSession } from 'zidane/session'
import type { SessionData } from 'zidane/session'
import { createBuiltinTools } from 'zidane/tools'
import { loadServicesConfig } from '../config'
import type { CurrentInvocation, PendingQuestion, SessionEvent, SessionEventsRequest, SessionInvocation, SessionRunRequest, SessionRunResult, SessionView } from '../contract'
import { CHILD_SERVICE, SESSION_SERVICE } from '../contract'
import type { ChildService } from '../child-runner/child-service'
import { servicesProvider } from '../model-provider'
import { sessionWorkspace } from '../workspace'
import { closeOpenQuestions } from './close-questions'
import { PENDING_QUESTIONS_KEY, restateInteractionTools } from './restate-interaction-tools'
import { buildSessionView, deriveEvents } from './session-view'

/** State key of the session's current run invocation. Durable name: never rename. */
export const CURRENT_INVOCATION_KEY = 'current_invocation'

const config = loadServicesConfig()
const Child: ChildService = { name: CHILD_SERVICE }

async function runSession(ctx: restate.ObjectContext, request: SessionRunRequest): Promise<SessionRunResult> {
  const invocation: CurrentInvocation = { invocationId: ctx.request().id, status: 'running', startedAt: await ctx.date.now() }
  ctx.set(CURRENT_INVOCATION_KEY, invocation)
  try {
    const stats = await runAgent(ctx, request)
    await closeOpenQuestions(ctx, 'finished')
    ctx.set(CURRENT_INVOCATION_KEY, { ...invocation, status: 'completed', endedAt: stats.endedAt })
    return { sessionId: ctx.key, status: stats.status, text: stats.text, stats }
  } catch (error) {
    if (isRestateCancellation(error)) {
      const endedAt = await ctx.date.now()
      await closeOpenQuestions(ctx, 'cancelled')
      ctx.set(CURRENT_INVOCATION_KEY, { ...invocation, status: 'cancelled', endedAt })
      await recordCancellation(ctx, endedAt)
    }
    throw error
  }
}

const CANCELLED_CALL_TEXT = '[Tool use cancelled] The run was cancelled before this call finished. Its effect may or may not have happened: check before you run it again.'

/** After a cancel: the cancelled run ends with status `cancelled`, and its open tool calls are closed so the history stays valid. */
async function recordCancellation(ctx: restate.ObjectContext, endedAt: number): Promise<void> {
  const session = await loadSession(restateSessionStore(ctx, { clock: { now: () => endedAt } }), ctx.key)
  if (!session) return
  const running = session.runs.filter(run => run.status === 'running')
  await session.healInterruptedToolCalls(CANCELLED_CALL_TEXT, running.at(-1)?.id)
  for (const run of running) await session.upsertRun({ ...run, status: 'cancelled', endedAt, error: 'cancelled' })
  await session.setStatus('cancelled')
}

async function runAgent(ctx: restate.ObjectContext, request: SessionRunRequest): Promise<AgentStats> {
  const durable = restateRuntime(ctx, { promises: restate.RestatePromise, idSeed: ctx.key })
  const store = durable.stores.session
  const session = (await loadSession(store, ctx.key)) ?? (await createSession({ id: ctx.key, store }))
  const root = await ctx.run('workspace', () => sessionWorkspace(config.workspaceRoot, ctx.key))
  const spawn = restateSpawnTool({
    dispatch: childRequest => ctx.serviceClient(Child).run(childRequest),
    onAbort: () => ctx.invocation(ctx.request().id).cancel(),
  })
  const agent = createAgent({
    provider: servicesProvider(),
    tools: [...createBuiltinTools({ root }), ...restateInteractionTools(ctx, config.questionTimeoutMs ? { timeoutMs: config.questionTimeoutMs } : {}), spawn],
    durable,
    session,
    behavior: { maxTurns: request.maxTurns ?? config.defaultMaxTurns, ...(config.maxCostUsd ? { maxCostUsd: config.maxCostUsd } : {}) },
  })
  return agent.run({ prompt: request.prompt, signal: ctx.request().attemptCompletedSignal, ...(request.model ? { model: request.model } : {}), ...(request.maxTurns ? { maxTurns: request.maxTurns } : {}) })
}

/** What the shared `get` handler returns, read without blocking a running invocation. */
async function readView(ctx: restate.ObjectSharedContext): Promise<SessionView> {
  const session = await readSession(ctx)
  const pending = (await ctx.get<PendingQuestion[]>(PENDING_QUESTIONS_KEY)) ?? []
  const invocation = await ctx.get<CurrentInvocation>(CURRENT_INVOCATION_KEY)
  return buildSessionView(ctx.key, session, pending, invocation)
}

async function readSession(ctx: restate.ObjectSharedContext): Promise<SessionData | null> {
  return (await loadSession(restateSessionStore(ctx, { readOnly: true }), ctx.key))?.toJSON() ?? null
}

const timeouts = { inactivityTimeout: config.inactivityTimeoutMs, abortTimeout: config.abortTimeoutMs }

/**
 * The agent session: one virtual object per session key (`<tenant>~<sessionId>`). `run` is exclusive (one run at
 * a time; later prompts queue), `get`, `invocation`, `pending` and `events` are shared and never block a running invocation.
 */
export const sessionObject = restate.object({
  name: SESSION_SERVICE,
  handlers: {
    run: restate.handlers.object.exclusive(timeouts, runSession),
    get: restate.handlers.object.shared(readView),
    invocation: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<SessionInvocation> => (await ctx.get<CurrentInvocation>(CURRENT_INVOCATION_KEY)) ?? null),
    pending: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<PendingQuestion[]> => (await ctx.get<PendingQuestion[]>(PENDING_QUESTIONS_KEY)) ?? []),
    events: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext, request: SessionEventsRequest | null): Promise<SessionEvent[]> => {
      const after = request?.after ?? 0
      return deriveEvents(await readSession(ctx)).filter(event => event.seq > after).slice(0, request?.limit ?? 100)
    }),
  },
  options: timeouts,
})

/** The session object's type, for typed clients. */
export type SessionObject = typeof sessionObject

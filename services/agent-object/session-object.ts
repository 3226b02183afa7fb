import * as restate from '@restatedev/restate-sdk'
import { createAgent } from 'zidane'
import type { AgentStats } from 'zidane'
import { isRestateCancellation, restateRuntime, restateSessionStore, restateSpawnTool } from 'zidane/restate'
import { createSession, loadSession } from 'zidane/session'
import { createBuiltinTools } from 'zidane/tools'
import { loadServicesConfig } from '../config'
import type { CurrentInvocation, PendingQuestion, SessionEvent, SessionEventsRequest, SessionRunRequest, SessionRunResult, SessionView } from '../contract'
import { CHILD_SERVICE, SESSION_SERVICE } from '../contract'
import type { ChildService } from '../child-runner/child-service'
import { servicesProvider } from '../model-provider'
import { sessionWorkspace } from '../workspace'
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
    ctx.set(CURRENT_INVOCATION_KEY, { ...invocation, status: 'completed', endedAt: stats.endedAt })
    return { sessionId: ctx.key, status: stats.status, text: stats.text, stats }
  } catch (error) {
    if (isRestateCancellation(error)) {
      const endedAt = await ctx.date.now()
      ctx.set(CURRENT_INVOCATION_KEY, { ...invocation, status: 'cancelled', endedAt })
      ctx.clear(PENDING_QUESTIONS_KEY)
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

async function readView(ctx: restate.ObjectSharedContext): Promise<{ view: SessionView; events: () => SessionEvent[] }> {
  const session = await loadSession(restateSessionStore(ctx, { readOnly: true }), ctx.key)
  const pending = (await ctx.get<PendingQuestion[]>(PENDING_QUESTIONS_KEY)) ?? []
  const invocation = await ctx.get<CurrentInvocation>(CURRENT_INVOCATION_KEY)
  const data = session?.toJSON() ?? null
  return { view: buildSessionView(ctx.key, data, pending, invocation), events: () => deriveEvents(data, pending, invocation) }
}

const timeouts = { inactivityTimeout: config.inactivityTimeoutMs, abortTimeout: config.abortTimeoutMs }

/**
 * The agent session: one virtual object per session key (`<tenant>~<sessionId>`). `run` is exclusive (one run at
 * a time; later prompts queue), `get`, `pending` and `events` are shared and never block a running invocation.
 */
export const sessionObject = restate.object({
  name: SESSION_SERVICE,
  handlers: {
    run: restate.handlers.object.exclusive(timeouts, runSession),
    get: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<SessionView> => (await readView(ctx)).view),
    pending: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<PendingQuestion[]> => (await ctx.get<PendingQuestion[]>(PENDING_QUESTIONS_KEY)) ?? []),
    events: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext, request: SessionEventsRequest | null): Promise<SessionEvent[]> => {
      const after = request?.after ?? 0
      return (await readView(ctx)).events().filter(event => event.seq > after).slice(0, request?.limit ?? 100)
    }),
  },
  options: timeouts,
})

/** The session object's type, for typed clients. */
export type SessionObject = typeof sessionObject

import * as restate from '@restatedev/restate-sdk'
import { createAgent } from 'zidane'
import type { AgentStats } from 'zidane'
import { restateRuntime, restateSpawnTool } from 'zidane/restate'
import type { ChildRunRequest, ChildRunResult, MergedChild, SpawnLimits } from 'zidane/restate'
import { createSession } from 'zidane/session'
import { boundaryProbe } from '../boundary-probe'
import { stepStartLog } from '../step-starts'
import { withErrorBoundary } from '../handler-boundary'
import { loadServicesConfig } from '../config'
import { CHILD_SERVICE } from '../contract'
import { rootSessionKey } from '../event-log/event-log-contract'
import { recordedChildStore } from '../event-log/session-events'
import { createEventOutbox } from '../event-log/event-outbox'
import type { SessionEventOutbox } from '../event-log/event-outbox'
import { servicesProvider } from '../model-provider'
import { childLiveSource, publishAgentDeltas } from '../live/agent-live'
import { processLiveHub } from '../live/process-hub'
import { sessionWorkspace } from '../workspace'
import { builtinTools, selectTools } from '../tool-selection'

const config = loadServicesConfig()

function refusedStats(request: ChildRunRequest, now: number): AgentStats {
  return { runId: 'refused', sessionId: request.sessionId ?? '', status: 'error', suspended: false, turns: 0, toolCalls: 0, modelRequests: 0, usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0, wallMs: 0, startedAt: now, endedAt: now, text: '' }
}

/** A child's own children share what the parent left it: its budget and tree allowance, and the per-turn limit. */
function childLimits(request: ChildRunRequest): SpawnLimits {
  return {
    maxChildrenPerTurn: config.maxChildrenPerTurn,
    ...(request.maxChildrenPerTree === undefined ? {} : { maxChildrenPerTree: request.maxChildrenPerTree }),
    ...(request.maxCostUsd === undefined ? {} : { maxCostUsd: request.maxCostUsd }),
  }
}

async function runChild(ctx: restate.Context, request: ChildRunRequest, outbox: SessionEventOutbox): Promise<ChildRunResult> {
  const startedAt = await ctx.date.now()
  if (request.depth > config.maxChildDepth) {
    const error = `Sub-agent depth ${request.depth} is above the maximum of ${config.maxChildDepth}; the task was not run.`
    return { text: '', status: 'error', error, stats: refusedStats(request, startedAt), turns: [], startedAt, endedAt: startedAt }
  }
  // The sub-agent's events go live to its root session's log; its turns reach the session when the parent merges them.
  const sessionStore = recordedChildStore(outbox, { depth: request.depth, label: request.label })
  const durable = restateRuntime(ctx, { promises: restate.RestatePromise, idSeed: ctx.request().id, sessionStore, startLog: stepStartLog(), ...boundaryProbe() })
  const session = await createSession({ id: `${request.sessionId ?? 'child'}:${request.label}`, store: sessionStore, clock: { now: () => startedAt } })
  const merged: MergedChild[] = []
  const root = await ctx.run('workspace', () => sessionWorkspace(config.workspaceRoot, request.sessionId ?? 'children'))
  const spawn = restateSpawnTool({
    dispatch: childRequest => ctx.serviceClient(Child).run(childRequest),
    persist: false,
    onChildMerged: child => { merged.push(child) },
    limits: childLimits(request),
  })
  const tools = selectTools(request.depth < config.maxChildDepth ? [...builtinTools(root), spawn] : builtinTools(root))
  const agent = createAgent({ provider: servicesProvider(), tools, durable, session, depth: request.depth, behavior: { persistDir: config.persistDir ?? root, ...(request.maxCostUsd === undefined ? {} : { maxCostUsd: request.maxCostUsd }) } })
  const live = childLiveSource(request.sessionId, request.label)
  if (live) publishAgentDeltas(agent, live, processLiveHub)
  const stats = await agent.run({ prompt: request.task, signal: ctx.request().attemptCompletedSignal, ...(request.model ? { model: request.model } : {}) })
  const endedAt = await ctx.date.now()
  const status = stats.status === 'completed' || stats.status === 'aborted' || stats.status === 'timeout' || stats.status === 'limit' ? stats.status : 'error'
  const result: ChildRunResult = { text: stats.text, status, stats, turns: [...session.turns], startedAt, endedAt, children: merged }
  if (status === 'error' && stats.reason) result.error = stats.reason
  return result
}

/** The child runner: runs one sub-agent to completion as its own invocation, refusing depth above the maximum. */
export const childService = restate.service({
  name: CHILD_SERVICE,
  handlers: {
    run: restate.handlers.handler({ inactivityTimeout: config.inactivityTimeoutMs, abortTimeout: config.abortTimeoutMs }, async (ctx: restate.Context, request: ChildRunRequest) => {
      // Per write, as before the outbox (nothing to sync): a child started by an older parent replays on this code unchanged.
      const outbox = createEventOutbox(ctx, rootSessionKey(request.sessionId ?? 'children'), undefined, 'per-write')
      return withErrorBoundary(() => runChild(ctx, request, outbox))
    }),
  },
})

/** The child runner's type, for typed clients. */
export type ChildService = typeof childService

const Child: ChildService = { name: CHILD_SERVICE }

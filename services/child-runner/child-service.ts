import * as restate from '@restatedev/restate-sdk'
import { createAgent } from 'zidane'
import type { AgentStats, CreateAgentOptions, ToolDef } from 'zidane'
import type { ChildRunRequest, ChildRunResult, MergedChild, SpawnLimits } from 'zidane/restate'
import { createSession } from 'zidane/session'
import { createBuiltinTools } from 'zidane/tools'
import { agentHandlerOptions, agentOutputs, agentRuntime, agentSpawnTool } from '../agent-deps'
import { mcpRunTools } from '../mcp-servers'
import type { AgentDeps } from '../agent-deps'
import { withErrorBoundary } from '../handler-boundary'
import { CHILD_SERVICE, SPAWN_TOOL } from '../../contract/session'
import type { PromptToolPolicy, ServicesChildRunRequest } from '../../contract/session'
import { policyPermission } from '../agent-object/approvals'
import { rootSessionKey } from '../../contract/event-log'
import type { RecorderIdentity } from 'zidane/session'
import { recordedChildStore } from '../event-log/session-events'
import { createEventOutbox } from '../event-log/event-outbox'
import type { EventSink } from '../event-log/session-events'
import { childLiveSource, publishAgentDeltas } from '../live/agent-live'
import { traceAgentRun } from '../telemetry/trace-agent'
import { sessionWorkspace, tenantOfSessionKey } from '../workspace'
import { runToolSet } from '../run-settings'
import type { RunSettings } from '../../contract/session'

function refusedStats(request: ChildRunRequest, now: number): AgentStats {
  return { runId: 'refused', sessionId: request.sessionId ?? '', status: 'error', suspended: false, turns: 0, toolCalls: 0, modelRequests: 0, usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: 0, wallMs: 0, startedAt: now, endedAt: now, text: '' }
}

/** A child's own children share what the parent left it: its budget and tree allowance, and the per-turn limit. */
function childLimits(request: ChildRunRequest, settings: RunSettings): SpawnLimits {
  return {
    maxChildrenPerTurn: settings.maxChildrenPerTurn,
    ...(request.maxChildrenPerTree === undefined ? {} : { maxChildrenPerTree: request.maxChildrenPerTree }),
    ...(request.maxCostUsd === undefined ? {} : { maxCostUsd: request.maxCostUsd }),
  }
}

/** The child's tools: the built-ins and (below the depth limit) `spawn`, as its tree's settings offer them. */
function childTools(deps: AgentDeps, request: ServicesChildRunRequest, settings: RunSettings, root: string, spawn: ToolDef): ToolDef[] {
  const builtins = createBuiltinTools(deps.tools.options(root, tenantOfSessionKey(treeKey(request))))
  const offered = deps.tools.offered(deps.config.workspaceRoot, [SPAWN_TOOL])
  return runToolSet(deps.tools, request.depth < settings.maxChildDepth ? [...builtins, spawn] : builtins, settings, offered)
}

/** The session key a sub-agent's tree works for (its workspace, its tenant). */
function treeKey(request: ChildRunRequest): string {
  return request.sessionId ?? 'children'
}

/**
 * The tree's tool policy in a sub-agent: denied tools are refused as in the parent, and so are the tools the parent
 * would ask a person about, since a sub-agent cannot ask (it has no session to list the question in).
 */
export function childPermission(settings: RunSettings, policy: PromptToolPolicy | undefined): CreateAgentOptions['canUseTool'] {
  const permission = policyPermission({ approve: settings.approveTools, deny: settings.denyTools }, policy)
  if (!permission) return undefined
  return call => {
    const decided = permission(call)
    return decided === 'ask' ? { deny: 'this tool needs a person\'s approval, which a sub-agent cannot ask for' } : decided
  }
}

async function runChild(deps: AgentDeps, ctx: restate.Context, request: ServicesChildRunRequest, outbox: EventSink): Promise<ChildRunResult> {
  const { settings } = request
  const startedAt = await ctx.date.now()
  if (request.depth > settings.maxChildDepth) {
    const error = `Sub-agent depth ${request.depth} is above the maximum of ${settings.maxChildDepth}; the task was not run.`
    return { text: '', status: 'error', error, stats: refusedStats(request, startedAt), turns: [], startedAt, endedAt: startedAt }
  }
  // The sub-agent's events go live to its root session's log; its turns reach the session when the parent merges them.
  const sessionStore = recordedChildStore(outbox, childIdentity(request))
  const durable = agentRuntime(ctx, deps, ctx.request().id, sessionStore)
  const session = await createSession({ id: `${request.sessionId ?? 'child'}:${request.label}`, store: sessionStore, clock: { now: () => startedAt } })
  const merged: MergedChild[] = []
  const root = await ctx.run('workspace', () => sessionWorkspace(deps.config.workspaceRoot, treeKey(request)))
  const spawn = agentSpawnTool(ctx, outbox, settings, request.policy, {
    persist: false,
    onChildMerged: child => { merged.push(child) },
    limits: childLimits(request, settings),
  })
  const model = request.model ?? settings.model
  const canUseTool = childPermission(settings, request.policy)
  const mcpTools = await mcpRunTools(ctx, deps.mcp, settings, tenantOfSessionKey(treeKey(request)), root)
  const agent = createAgent({ provider: deps.provider, tools: [...childTools(deps, request, settings, root, spawn), ...mcpTools], durable, session, depth: request.depth, ...(canUseTool ? { canUseTool } : {}), behavior: { ...agentOutputs(deps, root, treeKey(request)), ...(request.maxCostUsd === undefined ? {} : { maxCostUsd: request.maxCostUsd }) } })
  const live = childLiveSource(request.sessionId, request.label)
  if (live) publishAgentDeltas(agent, live, deps.liveHub)
  const traceId = traceAgentRun(agent, deps.tracing, ctx.request(), { sessionKey: treeKey(request), agentName: request.subagentType ?? request.label, provider: deps.provider })
  const stats = await agent.run({ prompt: request.task, signal: ctx.request().attemptCompletedSignal, traceId, ...(model ? { model } : {}) })
  const endedAt = await ctx.date.now()
  const status = stats.status === 'completed' || stats.status === 'aborted' || stats.status === 'timeout' || stats.status === 'limit' ? stats.status : 'error'
  const result: ChildRunResult = { text: stats.text, status, stats, turns: [...session.turns], startedAt, endedAt, children: merged }
  if (status === 'error' && stats.reason) result.error = stats.reason
  return result
}

/** Who a sub-agent's events say recorded them: its label and depth, and the run and call that spawned it. */
function childIdentity(request: ServicesChildRunRequest): RecorderIdentity & { label: string } {
  const { depth, label, parentRunId, parentCallId } = request
  return { depth, label, ...(parentRunId === undefined ? {} : { parentRunId }), ...(parentCallId === undefined ? {} : { parentCallId }) }
}

/** The child runner: runs one sub-agent to completion as its own invocation, refusing depth above the maximum. */
export function childService(deps: AgentDeps) {
  return restate.service({
    name: CHILD_SERVICE,
    handlers: {
      run: restate.handlers.handler(agentHandlerOptions(deps.config), async (ctx: restate.Context, request: ServicesChildRunRequest) => {
        const outbox = createEventOutbox(ctx, rootSessionKey(treeKey(request)))
        // Its last events (the end of its run), whether it completed or ended for good.
        return withErrorBoundary(async () => {
          const result = await runChild(deps, ctx, request, outbox)
          await outbox.settle()
          return result
        }, async () => { await outbox.settle() })
      }),
    },
  })
}

/** The child runner's type, for typed clients. */
export type ChildService = ReturnType<typeof childService>

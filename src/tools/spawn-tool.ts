import type { Agent, CreateAgentOptions } from '../agent/types'
import type { Session } from '../session/session'
import { createSession } from '../session/session'
import type { SessionRun } from '../session/types'
import type { ToolContext, ToolDef } from './tool'
import type { ToolStepRecord } from '../agent/tool-execution'

/** Options of the in-process spawn tool. */
export interface SpawnToolOptions {
  /** Builds the child's agent options (provider, tools, system) for a task; the runtime and depth are set by the tool. */
  childAgent: (task: string, depth: number) => Omit<CreateAgentOptions, 'durable' | 'session' | 'sessionId' | 'depth'>
  /** Creates the agent; pass `createAgent` (kept as an option so tools do not import the loop). */
  createAgent: (options: CreateAgentOptions) => Pick<Agent, "run" | "session" | "hooks">
  /** Merge the child's turns and run record into the parent session. Default true. */
  persist?: boolean
  /** Deepest sub-agent allowed (1 = children only). Default 2. */
  maxDepth?: number
  description?: string
}

/**
 * `spawn`: runs a sub-agent as its own run on the parent's runtime (so a resumed parent continues the same child
 * run), merges it into the parent session under a `SessionRun` labelled `child-1`, `child-2`, … and emits `child:*` events.
 */
export function createSpawnTool(options: SpawnToolOptions): ToolDef {
  const reserved = new Map<string, number>()
  return {
    spec: {
      name: 'spawn',
      description: options.description ?? 'Run a sub-agent on a task and return its final answer. Several spawn calls in one turn run in parallel.',
      inputSchema: { type: 'object', properties: { task: { type: 'string', minLength: 1 } }, required: ['task'], additionalProperties: false },
    },
    journal: 'self',
    isConcurrencySafe: true,
    execute: async (input, ctx) => {
      const label = reserveLabel(reserved, ctx)
      return runChild(options, String(input.task), label, ctx)
    },
  }
}

function reserveLabel(reserved: Map<string, number>, ctx: ToolContext): string {
  const existing = ctx.session?.runs.filter(run => run.label !== undefined && run.depth === ctx.depth + 1).length ?? 0
  const next = Math.max(existing, reserved.get(ctx.sessionId) ?? 0) + 1
  reserved.set(ctx.sessionId, next)
  return `child-${next}`
}

async function runChild(options: SpawnToolOptions, task: string, label: string, ctx: ToolContext): Promise<ToolStepRecord> {
  const depth = ctx.depth + 1
  if (depth > (options.maxDepth ?? 2)) return { content: `Cannot spawn: the maximum sub-agent depth (${options.maxDepth ?? 2}) is reached.`, isError: true }
  const childRunId = `${ctx.runId}.${ctx.callId}`
  const base = { label, depth, parentRunId: ctx.runId, parentCallId: ctx.callId, childRunId }
  const child = options.createAgent({ ...options.childAgent(task, depth), durable: ctx.runtime, depth, session: await createSession({ id: childRunId }) })
  forwardChildEvents(child, ctx, base)
  await ctx.hooks.callHook('child:run:start', { ...base, task })
  const stats = await child.run({ prompt: task, runId: childRunId })
  await ctx.hooks.callHook('child:run:end', { ...base, status: stats.status, stats })
  if (options.persist !== false && ctx.session) await mergeChild(ctx.session, await child.session(), base)
  return { content: stats.text || `(child ${label} ended with status ${stats.status})`, isError: stats.status === 'error', usage: stats.usage, costUsd: stats.costUsd, work: { modelRequests: stats.modelRequests, turns: stats.turns, toolCalls: stats.toolCalls } }
}

function forwardChildEvents(child: Pick<Agent, 'hooks'>, ctx: ToolContext, base: { label: string; depth: number; parentRunId: string; parentCallId: string; childRunId: string }): void {
  child.hooks.hook('turn:end', async event => { await ctx.hooks.callHook('child:turn:end', { ...base, turn: event.turn }) })
  child.hooks.hook('tool:start', async event => { await ctx.hooks.callHook('child:tool:start', { ...base, callId: event.callId, name: event.name }) })
  child.hooks.hook('tool:end', async event => { await ctx.hooks.callHook('child:tool:end', { ...base, callId: event.callId, name: event.name, isError: event.result.isError === true }) })
}

/** Merges a finished child's run record and turns into the parent session (ids are already unique per child run). */
async function mergeChild(parent: Session, childSession: Session, info: { label: string; parentRunId: string; parentCallId: string; childRunId: string }): Promise<void> {
  for (const run of childSession.runs) {
    const own = run.id === info.childRunId
    const merged: SessionRun = { ...run, parentRunId: own ? info.parentRunId : run.parentRunId ?? info.parentRunId }
    if (own) merged.parentCallId = info.parentCallId
    if (own) merged.label = info.label
    else if (run.label !== undefined) merged.label = `${info.label}/${run.label}`
    await parent.upsertRun(merged)
  }
  await parent.appendTurns(childSession.turns)
}

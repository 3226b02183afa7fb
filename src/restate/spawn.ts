import type { AgentStats, ChildEventBase } from '../agent/types'
import type { JsonObject } from '../json'
import type { Session } from '../session/session'
import type { SessionRun, SessionTurn } from '../session/types'
import type { ToolContext, ToolDef, ToolResult } from '../tools/tool'
import { isRestateCancellation } from './errors'
import { spawnAllowance, type ChildUsage, type SpawnLimits } from './spawn-limits'
import { onRuntimeCancelled } from './runtime'
import { isRestatePromiseLike } from './types'

/** How a child run ended (`limit`: it stopped at its cost budget, or was refused for having none left). */
export type ChildRunStatus = 'error' | 'completed' | 'aborted' | 'timeout' | 'limit'

/** What the parent hands a child invocation. */
export interface ChildRunRequest {
  /** The child's prompt. */
  task: string
  /** Session-scoped label the parent reserved (`child-1`, `child-2`, …). */
  label: string
  /** Subagent depth of the CHILD (parent depth + 1); the handler refuses runaway recursion. */
  depth: number
  /** Model override requested by the model, if any. */
  model?: string
  /** Named subagent type requested by the model, if any. */
  subagentType?: string
  /** Run that spawned this child. */
  parentRunId?: string
  /** Id of the parent tool call that spawned the child. */
  parentCallId?: string
  /** Id of the parent session. */
  sessionId?: string
  /** The child's cost budget: its share of what remains of the parent's `maxCostUsd` (none when the parent has none). */
  maxCostUsd?: number
  /** Sub-agents the child's own subtree may start (none: unlimited). */
  maxChildrenPerTree?: number
}

/** A descendant a child already merged, handed up so the top-level parent can rebuild the whole subtree. */
export interface MergedChild {
  /** Label this level assigned. The merging parent re-labels from its own session counter. */
  label: string
  /** Depth relative to the run that merged it (1 for its direct children). */
  depth: number
  task: string
  status: ChildRunStatus
  stats: AgentStats
  turns: SessionTurn[]
  startedAt?: number
  endedAt?: number
  children?: readonly MergedChild[]
}

/** What a child invocation returns. */
export interface ChildRunResult {
  /** The child's final assistant text. */
  text: string
  status: ChildRunStatus
  /** Cumulative stats of the child run, including its own descendants. */
  stats: AgentStats
  /** The child's turns, merged into the parent's session under a `SessionRun` for this child. */
  turns: SessionTurn[]
  /** Failure detail when `status` is `'error'`. */
  error?: string
  /** Start / end on the CHILD's clock (journaled there, so replay-stable here). */
  startedAt?: number
  endedAt?: number
  /** Descendants this child already merged (collect them with `onChildMerged`). */
  children?: readonly MergedChild[]
}

/** A child that was dispatched and has not settled yet. */
export interface InFlightChild {
  label: string
  task: string
  depth: number
}

/** Options for `restateSpawnTool`. */
export interface RestateSpawnToolOptions {
  /** Override the tool description shown to the model. */
  description?: string
  /** Start the child invocation and return the runtime's promise untouched (no then / catch / await). */
  dispatch: (req: ChildRunRequest, ctx: ToolContext) => Promise<ChildRunResult>
  /** Replay each finished child's transcript as `child:*` events on the parent's hooks. Default `true`. */
  emitChildEvents?: boolean
  /** Called once when the parent aborts (or its invocation is cancelled) with children still in flight. */
  onAbort?: (inFlight: readonly InFlightChild[], ctx: ToolContext) => void
  /** Called for each child as it merges, with the subtree it brought along. */
  onChildMerged?: (merged: MergedChild, ctx: ToolContext) => void
  /** Merge each child's turns and run record into the parent's session. Default `true` when the parent has a session. */
  persist?: boolean
  /** Fan-out and cost limits of the run's children (see {@link SpawnLimits}); none by default. */
  limits?: SpawnLimits
}

const DEFAULT_DESCRIPTION = 'Start a sub-agent on a self-contained task and get its final answer. Several spawn calls in one turn run in parallel.'

interface FinishedChild { callId: string; label: string; request: ChildRunRequest; result: ChildRunResult; ctx: ToolContext }

/** Session-scoped child labels (`createLabeler`). */
interface Labeler { next(session: Session | undefined): string }

/**
 * Creates a `spawn` tool whose children run as separate Restate invocations. `dispatch` starts each child; the
 * tool returns `promise.map(…)`, so the loop joins a fan-out with the runtime's own combinator. Children merge into
 * the parent's session on `tool-results:after`.
 */
export function restateSpawnTool(options: RestateSpawnToolOptions): ToolDef {
  const labels = createLabeler()
  const inFlight = new Map<string, InFlightChild>()
  const finished: FinishedChild[] = []
  const usedByRun = new Map<string, ChildUsage>()
  const watched = new WeakSet<object>()
  let abortFired = false
  const fireAbort = (ctx: ToolContext): void => {
    if (abortFired || inFlight.size === 0 || !options.onAbort) return
    abortFired = true
    options.onAbort([...inFlight.values()], ctx)
  }
  const watch = (ctx: ToolContext): void => {
    if (!watched.has(ctx.hooks)) {
      watched.add(ctx.hooks)
      ctx.hooks.hook('tool-results:after', async event => mergeFinished(finished, event.turnRecord, options, labels))
    }
    if (!watched.has(ctx.signal)) {
      watched.add(ctx.signal)
      ctx.signal.addEventListener('abort', () => fireAbort(ctx), { once: true })
    }
    if (!watched.has(ctx.runtime)) {
      watched.add(ctx.runtime)
      onRuntimeCancelled(ctx.runtime, () => fireAbort(ctx))
    }
  }
  return {
    spec: {
      name: 'spawn',
      description: options.description ?? DEFAULT_DESCRIPTION,
      inputSchema: {
        type: 'object',
        properties: {
          task: { type: 'string', description: 'The complete task for the sub-agent.' },
          model: { type: 'string', description: 'Optional model override.' },
          subagentType: { type: 'string', description: 'Optional named sub-agent type.' },
        },
        required: ['task'],
      },
    },
    journal: 'self',
    isConcurrencySafe: true,
    execute(input, ctx) {
      watch(ctx)
      const used = usedByRun.get(ctx.runId) ?? { costUsd: 0, children: 0 }
      usedByRun.set(ctx.runId, used)
      const allowance = spawnAllowance(options.limits ?? {}, ctx, used)
      if ('refusal' in allowance) return Promise.resolve({ content: `Sub-agent not started: ${allowance.refusal}.`, isError: true })
      const request = { ...buildRequest(input, ctx, labels.next(ctx.session)), ...allowance }
      inFlight.set(ctx.callId, { label: request.label, task: request.task, depth: request.depth })
      const settle = (value: ChildRunResult | undefined, failure: unknown): ToolResult | Promise<never> => {
        inFlight.delete(ctx.callId)
        if (failure !== undefined || !value) {
          if (isRestateCancellation(failure)) return Promise.reject(failure)
          return { content: `Sub-agent ${request.label} failed: ${failure instanceof Error ? failure.message : String(failure)}`, isError: true }
        }
        used.costUsd += value.stats.costUsd
        used.children += 1 + countTree(value.children)
        finished.push({ callId: ctx.callId, label: request.label, request, result: value, ctx })
        return toToolResult(request.label, value)
      }
      const promise = options.dispatch(request, ctx)
      const mapped = isRestatePromiseLike(promise)
        ? promise.map((value, failure) => settle(value, failure))
        : promise.then(value => settle(value, undefined), (error: unknown) => settle(undefined, error ?? new Error('child failed')))
      return observeDirectAwait(mapped as Promise<ToolResult>, error => { if (isRestateCancellation(error)) fireAbort(ctx) })
    },
  }
}

/** Session-scoped labels: `child-N`, counting child runs already in the session plus labels reserved since. */
function createLabeler(): Labeler {
  let base: number | undefined
  let reserved = 0
  return {
    next(session) {
      base ??= session?.childRunCount ?? 0
      return `child-${base + ++reserved}`
    },
  }
}

function buildRequest(input: JsonObject, ctx: ToolContext, label: string): ChildRunRequest {
  const request: ChildRunRequest = { task: String(input.task ?? ''), label, depth: ctx.depth + 1, parentRunId: ctx.runId, parentCallId: ctx.callId, sessionId: ctx.sessionId }
  if (typeof input.model === 'string') request.model = input.model
  if (typeof input.subagentType === 'string') request.subagentType = input.subagentType
  return request
}

function countTree(children: readonly MergedChild[] | undefined): number {
  return (children ?? []).reduce((sum, child) => sum + 1 + countTree(child.children), 0)
}

function toToolResult(label: string, result: ChildRunResult): ToolResult {
  const text = result.text || `(${label} returned no text)`
  const content = result.status === 'error' && result.error ? `${label} failed: ${result.error}\n${result.text}`.trim() : text
  // usage and costUsd ride along so the loop adds the child's spend to the run totals.
  const { modelRequests, turns, toolCalls } = result.stats
  const record = { content, usage: result.stats.usage, costUsd: result.stats.costUsd, work: { modelRequests, turns, toolCalls } }
  return result.status === 'error' ? { ...record, isError: true } : record
}

/**
 * Sees a rejection of a promise the loop awaits directly (a lone spawn call) without subscribing to it: durable
 * combinators read `publicPromise()`, never `then`, so only a direct `await` goes through the wrapper.
 */
function observeDirectAwait<T>(promise: Promise<T>, onRejected: (error: unknown) => void): Promise<T> {
  const then = promise.then.bind(promise)
  void Object.defineProperty(promise, 'then', {
    configurable: true,
    value: (onFulfilled?: (value: T) => unknown, onRejectedOuter?: (error: unknown) => unknown) => then(onFulfilled, (error: unknown) => {
      onRejected(error)
      if (onRejectedOuter) return onRejectedOuter(error)
      throw error
    }),
  })
  return promise
}

async function mergeFinished(finished: FinishedChild[], turnRecord: SessionTurn, options: RestateSpawnToolOptions, labels: Labeler): Promise<void> {
  const order = turnRecord.content.flatMap(block => (block.type === 'tool_result' ? [block.toolUseId] : []))
  // Merge in the order of the results (the submission order), not in the order the children finished: the merge
  // writes journaled state, so its order must replay identically.
  const position = (child: FinishedChild): number => order.indexOf(child.callId)
  const ready = finished.filter(child => position(child) >= 0).sort((left, right) => position(left) - position(right))
  for (const child of ready) {
    finished.splice(finished.indexOf(child), 1)
    const merged = await mergeChild(child.ctx, { ...child.result, label: child.label, depth: 1, task: child.request.task }, child.ctx.depth + 1, child.ctx.runId, child.callId, options, labels)
    options.onChildMerged?.(merged, child.ctx)
  }
}

/** Persists one child (and, recursively, its merged descendants) and replays its `child:*` events. */
async function mergeChild(ctx: ToolContext, child: MergedChild, depth: number, parentRunId: string, parentCallId: string, options: RestateSpawnToolOptions, labels: Labeler): Promise<MergedChild> {
  const runId = `${parentRunId}/${child.label}`
  const turns = child.turns.map(turn => ({ ...turn, id: `${runId}/${turn.id}`, runId }))
  const parentStart = ctx.session?.runs.find(run => run.id === ctx.runId)?.startedAt ?? 0
  const startedAt = child.startedAt ?? turns[0]?.createdAt ?? parentStart
  const endedAt = child.endedAt ?? turns.at(-1)?.createdAt ?? startedAt
  if ((options.persist ?? true) && ctx.session) {
    await ctx.session.appendTurns(turns)
    await ctx.session.upsertRun(buildRun(child, runId, depth, parentRunId, parentCallId, startedAt, endedAt))
  }
  const base: ChildEventBase = { label: child.label, depth, parentRunId, parentCallId, childRunId: runId }
  if (options.emitChildEvents ?? true) await emitChildEvents(ctx, base, child, turns)
  const children: MergedChild[] = []
  for (const grandchild of child.children ?? []) {
    const relabeled = { ...grandchild, label: labels.next(ctx.session), depth: child.depth + 1 }
    children.push(await mergeChild(ctx, relabeled, depth + 1, runId, parentCallId, options, labels))
  }
  const merged: MergedChild = { label: child.label, depth: child.depth, task: child.task, status: child.status, stats: child.stats, turns: child.turns, startedAt, endedAt }
  if (children.length > 0) merged.children = children
  return merged
}

function buildRun(child: MergedChild, runId: string, depth: number, parentRunId: string, parentCallId: string, startedAt: number, endedAt: number): SessionRun {
  const { stats } = child
  return {
    id: runId,
    status: child.status,
    prompt: child.task,
    startedAt,
    endedAt,
    label: child.label,
    depth,
    parentRunId,
    parentCallId,
    totals: { usage: stats.usage, costUsd: stats.costUsd, modelRequests: stats.modelRequests, toolCalls: stats.toolCalls, turns: stats.turns },
    text: stats.text,
  }
}

async function emitChildEvents(ctx: ToolContext, base: ChildEventBase, child: MergedChild, turns: readonly SessionTurn[]): Promise<void> {
  await ctx.hooks.callHook('child:run:start', { ...base, task: child.task })
  const names = new Map<string, string>()
  let turnNumber = 0
  for (const turn of turns) {
    for (const block of turn.content) {
      if (block.type === 'tool_use') {
        names.set(block.id, block.name)
        await ctx.hooks.callHook('child:tool:start', { ...base, callId: block.id, name: block.name })
      } else if (block.type === 'tool_result') {
        await ctx.hooks.callHook('child:tool:end', { ...base, callId: block.toolUseId, name: names.get(block.toolUseId) ?? '', isError: block.isError === true })
      }
    }
    if (turn.role === 'assistant') await ctx.hooks.callHook('child:turn:end', { ...base, turn: ++turnNumber })
  }
  await ctx.hooks.callHook('child:run:end', { ...base, status: child.status, stats: child.stats })
}

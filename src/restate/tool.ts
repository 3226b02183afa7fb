import type { JsonObject } from '../json'
import type { ToolResultContent } from '../providers/content'
import type { ToolContext, ToolDef, ToolOutput, ToolResult } from '../tools/tool'
import { ToolError, toToolResult } from '../tools/tool'
import { raceWithTimeout } from './awakeable'
import type { RestatePromiseRaceLike } from './awakeable'
import { isRestateCancellation, isRestateControlError } from './errors'
import { debug } from './replay'
import type { ReplayTracker } from './replay'
import { journalStep as journal } from './step-scope'
import { stageToolState, takeToolStateSnapshot } from '../tools/staged-tool-state'
import { DEFAULT_RUN_OPTIONS } from './types'
import type { DetachedTasksCapability, RestateContextLike, RestateRunOptions } from './types'

/** Awakeable-based completion wait of `RestateDurableStart.wait`: register → park outside the journal → result. */
export interface RestateDurableWait<Token = unknown, Resumed = unknown> {
  /** Per-call fast path, a pure function of the journaled token: skip the park and call `result` with `null`. */
  inline?: (token: Token, input: Record<string, unknown>, toolCtx: ToolContext) => boolean
  /** Durable race combinator for the timeout race: pass `RestatePromise`. Required with a positive timeout. */
  promises?: RestatePromiseRaceLike
  /** Register `awakeableId` as the exit resumer of the work behind `token`. Runs inside `ctx.run`. */
  register: (token: Token, awakeableId: string, input: Record<string, unknown>, toolCtx: ToolContext) => void | Promise<void>
  /** Synthesize the tool result once the park settles; `resumed` is `null` on timeout. Runs inside the final `ctx.run`. */
  result: (token: Token, resumed: Resumed | null, input: Record<string, unknown>, toolCtx: ToolContext) => string | ToolResultContent[] | Promise<string | ToolResultContent[]>
  /** Durable park deadline in milliseconds, or a function of the call's input. Unset / non-positive = park indefinitely. */
  timeoutMs?: number | ((input: Record<string, unknown>, toolCtx: ToolContext) => number | undefined)
}

/**
 * Opt-in two-phase journaling for long-running, re-attachable tools: `start` runs in its own `ctx.run` entry and
 * returns a re-attach token; then `attach` (one bounded `ctx.run`) or `wait` (awakeable park) produces the result.
 * On replay both receive the SAME token. The wrapped tool's own `execute` is bypassed.
 */
export interface RestateDurableStart<Token = unknown, Resumed = unknown> {
  /** Re-attach to the work behind `token` and produce the result, inside ONE `ctx.run` entry: short waits only. */
  attach?: (token: Token, input: Record<string, unknown>, toolCtx: ToolContext) => Promise<string | ToolResultContent[]>
  /** Cleanup for a job nobody will wait for (Restate cancellation while parked, or the per-call abort signal). */
  onAbort?: (token: Token, input: Record<string, unknown>, toolCtx: ToolContext) => void | Promise<void>
  /** Kick off the side effect; journaled before the wait. Cheap and idempotent-safe up to journal persistence. */
  start: (input: Record<string, unknown>, toolCtx: ToolContext) => Token | Promise<Token>
  /** Awakeable-based wait; wins over `attach` when both are set. */
  wait?: RestateDurableWait<Token, Resumed>
}

/** Options for `restateTool`. */
export interface RestateToolOptions<Token = unknown, Resumed = unknown> {
  /** Collapse malformed result blocks to a text placeholder before journaling. Default `true`. */
  coerceResultBlocks?: boolean
  /** Detached-tasks capability of the execution context; drives the `disableShellBackground` default. */
  detachedTasks?: DetachedTasksCapability
  /** Hide and reject the built-in shell tool's background mode. Default: disabled unless `detachedTasks` is `'durable'`. */
  disableShellBackground?: boolean
  /** Two-phase start/attach journaling for crash-safe long tools. */
  durableStart?: RestateDurableStart<Token, Resumed>
  /** Override the journal-entry name. Default `tool-<name>-<seq>`. */
  entryName?: (seq: number, name: string, input: Record<string, unknown>, callId?: string) => string
  /** Per-invocation replay tracker, marked live from inside the wrapper's journaled closures. */
  replayTracker?: ReplayTracker
  /** `ctx.run` options of every wrapped call. Default `{ maxRetryAttempts: 1 }`. */
  runOptions?: RestateRunOptions
  /** Keep an ordinary tool throw non-fatal: captured inside the journal, re-thrown as a plain error outside. Default `true`. */
  softErrors?: boolean
}

const SOFT_ERROR_KEY = '__zidaneSoftError'
type SoftError = { [SOFT_ERROR_KEY]: { name: string; message: string } }
const SHELL_TOOL_NAMES = new Set(['shell', 'bash'])

function isSoftError(value: unknown): value is SoftError {
  return typeof value === 'object' && value !== null && SOFT_ERROR_KEY in value
}

/**
 * Wrap a `ToolDef` so its `execute` runs inside `ctx.run`. `spec` and `isConcurrencySafe` pass through; the wrapper
 * journals itself (`journal: 'self'`), so the loop does not nest it in a step.
 */
export function restateTool<Token = unknown, Resumed = unknown>(inner: ToolDef, ctx: RestateContextLike, options: RestateToolOptions<Token, Resumed> = {}): ToolDef {
  const name = inner.spec.name
  const hideBackground = SHELL_TOOL_NAMES.has(name) && (options.disableShellBackground ?? options.detachedTasks !== 'durable')
  const runOptions = options.runOptions ?? DEFAULT_RUN_OPTIONS
  let seq = 0
  const wrapped: ToolDef = {
    spec: hideBackground ? withoutBackground(inner.spec) : inner.spec,
    journal: 'self',
    async execute(input, toolCtx) {
      if (hideBackground && input.background === true) throw new ToolError('Background mode is disabled on this host.', 'background_disabled')
      const entry = options.entryName ? options.entryName(++seq, name, input, toolCtx.callId) : `tool-${name}-${++seq}`
      if (options.durableStart) return executeTwoPhase(ctx, options.durableStart, entry, input, toolCtx, runOptions, options.replayTracker)
      const snapshot = await takeToolStateSnapshot(toolCtx.toolState)
      const journaled = await journal<ToolResult | SoftError>(ctx, entry, async () => {
        options.replayTracker?.markLive()
        const staged = snapshot ? stageToolState(snapshot) : undefined
        try {
          const result = toToolResult(await inner.execute(input, staged ? { ...toolCtx, toolState: staged.store } : toolCtx))
          const writes = staged?.writes()
          // The loop applies `toolState` writes after the call, on the first run and on replay alike.
          return { ...(options.coerceResultBlocks === false ? result : coerceResult(result)), ...(writes ? { toolState: writes } : {}) }
        } catch (error) {
          if (isRestateControlError(error) || options.softErrors === false) throw error
          return { [SOFT_ERROR_KEY]: { name: error instanceof Error ? error.name : 'Error', message: error instanceof Error ? error.message : String(error) } }
        }
      }, runOptions)
      if (!isSoftError(journaled)) return journaled
      const { name: errorName, message } = journaled[SOFT_ERROR_KEY]
      if (errorName === 'AbortError') throw Object.assign(new Error(message), { name: 'AbortError' })
      throw new Error(message)
    },
  }
  if (inner.isConcurrencySafe !== undefined) wrapped.isConcurrencySafe = inner.isConcurrencySafe
  if (inner.replay !== undefined) wrapped.replay = inner.replay
  return wrapped
}

async function executeTwoPhase<Token, Resumed>(ctx: RestateContextLike, durable: RestateDurableStart<Token, Resumed>, entry: string, input: JsonObject, toolCtx: ToolContext, runOptions: RestateRunOptions, replayTracker: ReplayTracker | undefined): Promise<ToolOutput> {
  const token = await journal(ctx, `${entry}-start`, async () => {
    replayTracker?.markLive()
    return durable.start(input, toolCtx)
  }, runOptions)
  const abortLocally = (): void => { void safely(() => durable.onAbort?.(token, input, toolCtx)) }
  toolCtx.signal.addEventListener('abort', abortLocally, { once: true })
  try {
    const { wait } = durable
    if (!wait) {
      if (!durable.attach) throw new ToolError(`${entry}: durableStart needs attach or wait.`, 'tool_misconfigured')
      const attach = durable.attach
      return await journal(ctx, `${entry}-attach`, () => attach(token, input, toolCtx), runOptions)
    }
    if (wait.inline?.(token, input, toolCtx)) return await journal(ctx, `${entry}-result`, () => wait.result(token, null, input, toolCtx), runOptions)
    const resumed = await parkOnAwakeable(ctx, durable, wait, entry, token, input, toolCtx, runOptions)
    return await journal(ctx, `${entry}-result`, () => wait.result(token, resumed, input, toolCtx), runOptions)
  } finally {
    toolCtx.signal.removeEventListener('abort', abortLocally)
  }
}

async function parkOnAwakeable<Token, Resumed>(ctx: RestateContextLike, durable: RestateDurableStart<Token, Resumed>, wait: RestateDurableWait<Token, Resumed>, entry: string, token: Token, input: JsonObject, toolCtx: ToolContext, runOptions: RestateRunOptions): Promise<Resumed | null> {
  const awakeable = ctx.awakeable<Resumed>()
  const marker = await journal(ctx, `${entry}-register`, async () => {
    await wait.register(token, awakeable.id, input, toolCtx)
    return { awakeableId: awakeable.id }
  }, runOptions)
  if (marker.awakeableId !== awakeable.id) throw new Error(`${entry}: journal drift, registered ${marker.awakeableId} but parked on ${awakeable.id}`)
  const timeoutMs = typeof wait.timeoutMs === 'function' ? wait.timeoutMs(input, toolCtx) : wait.timeoutMs
  try {
    const outcome = await raceWithTimeout(ctx, awakeable.promise, { timeoutMs, promises: wait.promises })
    return outcome.timedOut ? null : outcome.value
  } catch (error) {
    if (isRestateCancellation(error) && durable.onAbort) {
      const onAbort = durable.onAbort
      await journal(ctx, `${entry}-abort`, async () => { await safely(() => onAbort(token, input, toolCtx)) }, runOptions)
    }
    throw error
  }
}

async function safely(action: () => unknown): Promise<void> {
  try {
    await action()
  } catch (error) {
    debug('onAbort failed', error)
  }
}

function withoutBackground(spec: ToolDef['spec']): ToolDef['spec'] {
  const properties = spec.inputSchema.properties
  if (!properties || typeof properties !== 'object' || Array.isArray(properties) || !('background' in properties)) return spec
  const { background: _background, ...rest } = properties
  return { ...spec, inputSchema: { ...spec.inputSchema, properties: rest } }
}

/** Replaces result blocks a provider serializer could not project (an image without data, foreign shapes) with text. */
function coerceResult(result: ToolResult): ToolResult {
  if (typeof result.content === 'string') return result
  const content = result.content.map((block): ToolResultContent => {
    if (block.type === 'text' && typeof block.text === 'string') return block
    if (block.type === 'image' && typeof block.data === 'string' && block.data && typeof block.mediaType === 'string') return block
    return { type: 'text', text: `[unsupported ${String((block as { type?: unknown }).type)} block]` }
  })
  return { ...result, content }
}

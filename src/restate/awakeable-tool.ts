import type { JsonObject } from '../json'
import type { AwakeableOutcome } from '../durable/runtime'
import { ConfigurationError } from '../errors/zidane-error'
import type { ToolResultContent } from '../providers/content'
import type { ToolContext, ToolDef, ToolResult } from '../tools/tool'
import { mapPromise, raceWithTimeout } from './awakeable'
import { DEFAULT_RUN_OPTIONS } from './types'
import type { RestateContextLike, RestateRunOptions } from './types'
import { journalStep } from './step-scope'

/**
 * The SDK `RestatePromise` statics the tool uses: pass `RestatePromise`. Method syntax on purpose: it keeps the SDK's
 * generic signatures assignable, so `promises: RestatePromise` typechecks.
 */
export interface AwakeableToolCombinators {
  /** Resolves with every value once all have settled. */
  all(values: readonly Promise<unknown>[]): Promise<unknown>
  /** First fulfilled value; rejects only when every input rejects. */
  any?(values: readonly Promise<unknown>[]): Promise<unknown>
  /** Resolves with the first of `values` to settle. */
  race(values: readonly Promise<unknown>[]): Promise<unknown>
}

/** Options for `restateAwakeableTool`. */
export interface RestateAwakeableToolOptions<T = unknown> {
  /** The Restate context the awakeable + journal entries bind to. */
  ctx: RestateContextLike
  /** Canonical tool name (what the model calls). */
  name: string
  /** Model-facing tool description. */
  description: string
  /** JSON schema for the tool input. */
  inputSchema: Record<string, unknown>
  /** Concurrency-safety flag of the `ToolDef`. Default `false`: a parked wait holding a scheduler slot should barrier. */
  isConcurrencySafe?: boolean
  /** Send the awakeable id out-of-band. Runs inside `ctx.run`: fires exactly once across replays. */
  notify: (info: { awakeableId: string; input: Record<string, unknown>; toolCtx: ToolContext }) => void | Promise<void>
  /** Durable combinators: pass `RestatePromise`. Needed for `timeoutMs` (race) and for joining durable fleets (all). */
  promises?: AwakeableToolCombinators
  /** `ctx.run` options for the notify entry. Default `{ maxRetryAttempts: 1 }`. */
  runOptions?: RestateRunOptions
  /** Durable park deadline in milliseconds; on timeout the call fails with a tool error. Requires `promises`. */
  timeoutMs?: number
  /** Map the resolved payload to the tool result. Default: strings pass through, everything else is JSON-stringified. */
  toResult?: (value: T, input: Record<string, unknown>) => string | ToolResultContent[]
}

interface NotifyMarker { awakeableId: string }

/**
 * Build a `ToolDef` that parks on a Restate awakeable until an external resumer resolves it. The awakeable is
 * minted before the journaled notify entry, so a replay re-parks on the same id without notifying again; the marker
 * the entry records is checked against the minted id. With `promises`, the notify entry and the park are joined in
 * one durable combinator, so the returned promise stays joinable by `RestatePromise.all`.
 *
 * Do NOT wrap the returned tool in `restateTool`: an outer `ctx.run` would nest the suspension point inside a
 * journaled closure.
 */
export function restateAwakeableTool<T = unknown>(options: RestateAwakeableToolOptions<T>): ToolDef {
  const { ctx, name } = options
  const timeoutMs = options.timeoutMs ?? 0
  if (timeoutMs > 0 && !options.promises) throw new ConfigurationError(`restateAwakeableTool(${name}): timeoutMs needs \`promises: RestatePromise\`.`, 'restate_promises_required')
  let seq = 0
  return {
    spec: { name, description: options.description, inputSchema: options.inputSchema as JsonObject },
    journal: 'self',
    isConcurrencySafe: options.isConcurrencySafe ?? false,
    execute(input, toolCtx) {
      const entry = `${name}-${toolCtx.callId || ++seq}-notify`
      const awakeable = ctx.awakeable<T>()
      const marker = journalStep<NotifyMarker>(ctx, entry, async () => {
        await options.notify({ awakeableId: awakeable.id, input, toolCtx })
        return { awakeableId: awakeable.id }
      }, options.runOptions ?? DEFAULT_RUN_OPTIONS)
      const finish = (journaled: NotifyMarker, outcome: AwakeableOutcome<T>): ToolResult => {
        if (journaled.awakeableId !== awakeable.id) throw new Error(`restateAwakeableTool(${name}): journal drift, notified ${journaled.awakeableId} but parked on ${awakeable.id}`)
        if (outcome.timedOut) return { content: `${name} timed out after ${timeoutMs} ms without an answer.`, isError: true }
        return { content: (options.toResult ?? defaultToResult)(outcome.value, input) }
      }
      const park = (): Promise<AwakeableOutcome<T>> => raceWithTimeout(ctx, awakeable.promise, { timeoutMs, promises: options.promises })
      if (options.promises) return mapPromise(options.promises.all([marker, park()]), values => finish(...(values as [NotifyMarker, AwakeableOutcome<T>])))
      return marker.then(async journaled => finish(journaled, await park()))
    },
  }
}

function defaultToResult(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? null)
}

import { copyData } from '../durable/copy-data'
import type { JsonObject } from '../json'
import { ZidaneError } from '../errors/zidane-error'
import type { ToolStateStore } from '../session/types'
import { assertOutsideStep } from './step-scope'
import type { RestateObjectContextLike } from './types'

/** Default virtual-object state key holding the tool-state map. */
export const DEFAULT_TOOL_STATE_KEY = 'zidane_tool_state'

/** Default per-value budget of a tool-state write: 64 KiB, far below Restate's journal-entry ceiling on purpose. */
export const DEFAULT_MAX_VALUE_BYTES = 64 * 1024

/** Options for `restateToolStateStore`. */
export interface RestateToolStateStoreOptions {
  /** Override the state key. Defaults to `DEFAULT_TOOL_STATE_KEY`. */
  key?: string
  /**
   * Per-value size budget enforced when a tool stages a write (default 64 KiB). An oversized state value fails the
   * invocation with `RT0003` and is retried: a poison pill, not a dropped write.
   */
  maxValueBytes?: number
}

/**
 * Build a `ToolStateStore` over the bound virtual object's state: one JSON map under `key`. Build it inside the
 * handler (it closes over this invocation's `ctx`); single-writer like the session store.
 *
 * It has `snapshot()`, so the agent loop stages it: a tool reads the map as it was before its step and its writes are
 * journaled with the step's result, then applied with `ctx.set` after the step resolves. Every method refuses to run
 * inside a step's closure (`restate_context_in_step`).
 */
export function restateToolStateStore(ctx: RestateObjectContextLike, options: RestateToolStateStoreOptions = {}): ToolStateStore {
  const stateKey = options.key ?? DEFAULT_TOOL_STATE_KEY
  const maxValueBytes = options.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES
  // One read per store, shared by concurrent first calls; writes update the cached map in place, so concurrent sets all land.
  let map: Promise<Record<string, JsonObject>> | undefined
  const load = (operation: string): Promise<Record<string, JsonObject>> => {
    assertOutsideStep(`toolState.${operation}()`)
    return (map ??= ctx.get<Record<string, JsonObject>>(stateKey).then(value => value ?? {}))
  }
  return {
    async get(key) {
      const value = (await load('get'))[key]
      return value === undefined ? null : copyData(value)
    },
    async snapshot() {
      return copyData(await load('snapshot'))
    },
    async set(key, value) {
      const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8')
      if (bytes > maxValueBytes) {
        throw new ZidaneError(`Tool state "${key}" is ${bytes} bytes, over the ${maxValueBytes}-byte limit.`, { code: 'tool_state_too_large', category: 'limit' })
      }
      const current = await load('set')
      current[key] = copyData(value)
      ctx.set(stateKey, { ...current })
    },
  }
}

import { copyData } from '../durable/copy-data'
import type { JsonObject } from '../json'
import type { ToolStateStore } from '../session/types'

/** Tool-state writes of one journaled call, by key, in the order they were made (last write of a key wins). */
export type ToolStateWrites = Record<string, JsonObject>

/** A tool-state view for one journaled call: reads from a snapshot taken before the step, writes kept for the journal. */
export interface StagedToolState {
  /** What the tool sees as `ctx.toolState`. */
  readonly store: ToolStateStore
  /** The writes the call made, or `undefined` when it made none. */
  writes(): ToolStateWrites | undefined
}

/**
 * Stages `snapshot` for one call. Reads see the snapshot plus the call's own writes; nothing touches the real store,
 * so the call can run inside a step. The caller journals `writes()` with the step result and applies them after the
 * step resolves (`applyToolStateWrites`), identically on replay.
 */
export function stageToolState(snapshot: Readonly<ToolStateWrites>): StagedToolState {
  const writes: ToolStateWrites = {}
  let written = false
  const store: ToolStateStore = {
    async get(key) {
      const value = key in writes ? writes[key] : snapshot[key]
      return value === undefined ? null : copyData(value)
    },
    async set(key, value) {
      writes[key] = copyData(value)
      written = true
    },
    async snapshot() {
      return copyData({ ...snapshot, ...writes })
    },
  }
  return { store, writes: () => (written ? copyData(writes) : undefined) }
}

/** The snapshot a staged call reads, or `undefined` when `store` cannot be staged (it is then used directly). */
export async function takeToolStateSnapshot(store: ToolStateStore | undefined): Promise<ToolStateWrites | undefined> {
  return store?.snapshot ? store.snapshot() : undefined
}

/** Applies a journaled call's writes to the real store, key by key in the order they were recorded. */
export async function applyToolStateWrites(store: ToolStateStore | undefined, writes: ToolStateWrites | undefined): Promise<void> {
  if (!store || !writes) return
  for (const [key, value] of Object.entries(writes)) await store.set(key, value)
}

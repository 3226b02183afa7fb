import { copyData } from './copy-data'
import type { JsonObject } from '../json'
import type { ToolStateStore } from '../session/types'

/** A `ToolStateStore` in process memory. */
export function createMemoryToolStateStore(): ToolStateStore {
  const values = new Map<string, JsonObject>()
  return {
    get: async key => (values.has(key) ? copyData(values.get(key) as JsonObject) : null),
    set: async (key, value) => { values.set(key, copyData(value)) },
    snapshot: async () => copyData(Object.fromEntries(values)),
  }
}

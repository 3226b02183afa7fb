import type { JsonValue } from '../json'
import type { AwakeableOutcome, DurableAwakeable } from './runtime'

/** In-process awakeables: ids mapped to waiters, with values kept when they arrive before anyone waits. */
export interface AwakeableRegistry {
  create<T>(id: string, timeoutMs?: number): DurableAwakeable<T>
  resolve(id: string, value: JsonValue): void
  /** The value an awakeable was resolved with, if any. */
  valueOf(id: string): { value: JsonValue } | undefined
}

/** Creates an empty registry. */
export function createAwakeableRegistry(): AwakeableRegistry {
  const values = new Map<string, JsonValue>()
  const waiters = new Map<string, Array<(value: JsonValue) => void>>()
  return {
    create<T>(id: string, timeoutMs?: number): DurableAwakeable<T> {
      return { id, wait: () => waitFor<T>(id, values, waiters, timeoutMs) }
    },
    resolve(id, value) {
      if (values.has(id)) return
      values.set(id, value)
      for (const wake of waiters.get(id) ?? []) wake(value)
      waiters.delete(id)
    },
    valueOf(id) {
      return values.has(id) ? { value: values.get(id) as JsonValue } : undefined
    },
  }
}

function waitFor<T>(id: string, values: Map<string, JsonValue>, waiters: Map<string, Array<(value: JsonValue) => void>>, timeoutMs?: number): Promise<AwakeableOutcome<T>> {
  if (values.has(id)) return Promise.resolve({ timedOut: false, value: values.get(id) as T })
  return new Promise(resolve => {
    const timer = timeoutMs !== undefined && timeoutMs > 0 ? setTimeout(() => resolve({ timedOut: true }), timeoutMs) : undefined
    const list = waiters.get(id) ?? []
    list.push(value => {
      if (timer) clearTimeout(timer)
      resolve({ timedOut: false, value: value as T })
    })
    waiters.set(id, list)
  })
}

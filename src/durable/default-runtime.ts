import { createMemorySessionStore } from '../session/memory-session-store'
import type { SessionStore, ToolStateStore } from '../session/types'
import type { JsonValue } from '../json'
import { createAwakeableRegistry } from './awakeable-registry'
import { createMemoryToolStateStore } from './memory-tool-state-store'
import type { DurableRuntime } from './runtime'

/** Options of the default runtime: where sessions live (in memory by default). */
export interface DefaultRuntimeOptions {
  sessionStore?: SessionStore
  toolStateStore?: ToolStateStore
}

/** The runtime without durability: steps run directly and nothing is recorded. `createAgent` uses it when no `durable` is given. */
export function createDefaultRuntime(options: DefaultRuntimeOptions = {}): DurableRuntime {
  const awakeables = createAwakeableRegistry()
  return {
    kind: 'default',
    durable: false,
    stores: { session: options.sessionStore ?? createMemorySessionStore(), toolState: options.toolStateStore ?? createMemoryToolStateStore() },
    defaults: {},
    step: (_key, execute) => execute({ resumed: false }),
    now: async () => Date.now(),
    uuid: () => crypto.randomUUID(),
    awakeable: <T>(_key: unknown, awakeableOptions: { timeoutMs?: number } = {}) => awakeables.create<T>(crypto.randomUUID(), awakeableOptions.timeoutMs),
    resolveAwakeable: async (id: string, value: JsonValue) => { awakeables.resolve(id, value) },
    all: promises => Promise.all(promises),
    race: promises => Promise.race(promises),
    allSettled: promises => Promise.allSettled(promises),
    sleep: ms => new Promise(resolve => setTimeout(resolve, ms)),
    isControlError: () => false,
  }
}

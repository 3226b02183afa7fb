import type { RestateAwakeable, RestateObjectContextLike, RestateRunOptions } from '../../../src/restate/types'

/** A hand-driven object context: state in a Map, `run` executes at once, a clock that ticks 1 ms per read. */
export interface FakeObjectContext extends RestateObjectContextLike {
  readonly state: Map<string, unknown>
  readonly runs: Array<{ name: string; options: RestateRunOptions | undefined }>
  readonly resolvers: Map<string, (value: unknown) => void>
  /** Number of `date.now()` reads. */
  nowReads: number
}

/** Creates a fake object context keyed `key`, optionally with pre-existing state. */
export function createFakeObjectContext(key = 'session-1', initialState: Record<string, unknown> = {}): FakeObjectContext {
  let clock = 1_700_000_000_000
  let awakeables = 0
  const context: FakeObjectContext = {
    key,
    state: new Map(Object.entries(structuredClone(initialState))),
    runs: [],
    resolvers: new Map(),
    nowReads: 0,
    async run<T>(name: string, fn: () => T | Promise<T>, options?: RestateRunOptions): Promise<T> {
      context.runs.push({ name, options })
      return fn()
    },
    sleep: async () => {},
    date: { now: async () => { context.nowReads++; return clock++ } },
    rand: { uuidv4: () => '00000000-0000-4000-8000-000000000000' },
    awakeable<T>(): RestateAwakeable<T> {
      const id = `awk_${++awakeables}`
      const promise = new Promise<T>(resolve => { context.resolvers.set(id, value => resolve(value as T)) })
      return { id, promise }
    },
    resolveAwakeable(id: string, payload?: unknown) { context.resolvers.get(id)?.(payload) },
    async get<T>(name: string): Promise<T | null> {
      return context.state.has(name) ? structuredClone(context.state.get(name)) as T : null
    },
    set<T>(name: string, value: T) { context.state.set(name, structuredClone(value)) },
    clear(name: string) { context.state.delete(name) },
  }
  return context
}

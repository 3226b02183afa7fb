import { describe, expect, it } from 'vitest'
import { createMemoryToolStateStore } from '../../src/durable/memory-tool-state-store'
import { applyToolStateWrites, stageToolState, takeToolStateSnapshot } from '../../src/tools/staged-tool-state'

describe('staged tool state', () => {
  it('reads the snapshot and its own writes, leaves the store alone until the writes are applied', async () => {
    const store = createMemoryToolStateStore()
    await store.set('todos', { items: ['a'] })
    const snapshot = await takeToolStateSnapshot(store)
    const staged = stageToolState(snapshot ?? {})
    expect(await staged.store.get('todos')).toEqual({ items: ['a'] })
    await staged.store.set('todos', { items: ['a', 'b'] })
    expect(await staged.store.get('todos')).toEqual({ items: ['a', 'b'] })
    expect(await store.get('todos')).toEqual({ items: ['a'] })
    const writes = staged.writes()
    expect(writes).toEqual({ todos: { items: ['a', 'b'] } })
    await applyToolStateWrites(store, writes)
    expect(await store.get('todos')).toEqual({ items: ['a', 'b'] })
  })

  it('reports no writes for a call that wrote nothing, and does not stage a store without snapshots', async () => {
    expect(stageToolState({}).writes()).toBeUndefined()
    expect(await takeToolStateSnapshot({ get: async () => null, set: async () => undefined })).toBeUndefined()
  })
})

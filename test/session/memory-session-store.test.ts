import { describe, expect, it } from 'vitest'
import { createMemorySessionStore } from '../../src/session/memory-session-store'
import { SESSION_SCHEMA_VERSION } from '../../src/session/types'
import type { SessionData, SessionTurn } from '../../src/session/types'

const turn = (id: string): SessionTurn => ({ id, runId: 'run', role: 'user', content: [{ type: 'text', text: id }], createdAt: 1 })
const session = (turns: SessionTurn[]): SessionData => ({ schemaVersion: SESSION_SCHEMA_VERSION, id: 's', status: 'idle', turns, runs: [], createdAt: 1, updatedAt: 1, metadata: {} })
const idsOf = async (store: ReturnType<typeof createMemorySessionStore>): Promise<string[]> => (await store.load('s'))?.turns.map(stored => stored.id) ?? []

describe('memory session store', () => {
  it('skips turns already stored, across header writes', async () => {
    const store = createMemorySessionStore()
    await store.save(session([turn('a')]))
    await store.appendTurns('s', [turn('a'), turn('b')])
    const { turns: _turns, ...meta } = session([])
    await store.saveMeta('s', { ...meta, status: 'running' })
    await store.appendTurns('s', [turn('b'), turn('c')])
    expect(await idsOf(store)).toEqual(['a', 'b', 'c'])
  })

  it('checks appends against the turns of the latest save, not those it replaced', async () => {
    const store = createMemorySessionStore()
    await store.save(session([turn('a'), turn('b')]))
    await store.appendTurns('s', [turn('c')])
    await store.save(session([turn('a')]))
    await store.appendTurns('s', [turn('b'), turn('c'), turn('a')])
    expect(await idsOf(store)).toEqual(['a', 'b', 'c'])
  })

  it('keeps the turns of two sessions apart, one of them created by a header write', async () => {
    const store = createMemorySessionStore()
    await store.save(session([turn('a')]))
    const { turns: _turns, ...meta } = { ...session([]), id: 't' }
    await store.saveMeta('t', meta)
    await store.appendTurns('t', [turn('a'), turn('b')])
    await store.appendTurns('s', [turn('b')])
    expect((await store.load('t'))?.turns.map(stored => stored.id)).toEqual(['a', 'b'])
    expect(await idsOf(store)).toEqual(['a', 'b'])
  })
})

import { describe, expect, it } from 'vitest'
import { isZidaneError } from '../../src/errors/zidane-error'
import { createSession, loadSession } from '../../src/session/session'
import { SESSION_SCHEMA_VERSION } from '../../src/session/types'
import type { SessionMeta, SessionTurn } from '../../src/session/types'
import { restateRuntime } from '../../src/restate/runtime'
import {
  LEGACY_SESSION_TURNS_STATE_KEY, restateSessionStore, SESSION_STATE_KEY, SESSION_TURN_STATE_KEY_PREFIX, SESSION_TURNS_STATE_KEY, sessionTurnStateKey,
} from '../../src/restate/session'
import { createFakeObjectContext } from '../helpers/restate/fake-context'
import type { FakeObjectContext } from '../helpers/restate/fake-context'

function turn(id: string, createdAt = 1): SessionTurn {
  return { id, runId: 'r1', role: 'user', content: [{ type: 'text', text: id }], createdAt }
}

function header(id: string, createdAt = 10): SessionMeta {
  return { schemaVersion: SESSION_SCHEMA_VERSION, id, status: 'idle', runs: [], createdAt, updatedAt: createdAt, metadata: { tag: 'old' } }
}

/** Records every state command the store issues, in order. */
function recordWrites(ctx: FakeObjectContext): Array<[op: 'set' | 'clear', key: string]> {
  const writes: Array<['set' | 'clear', string]> = []
  const set = ctx.set.bind(ctx)
  const clear = ctx.clear.bind(ctx)
  Object.assign(ctx, {
    set(name: string, value: unknown) { writes.push(['set', name]); set(name, value) },
    clear(name: string) { writes.push(['clear', name]); clear(name) },
  })
  return writes
}

/** Records every state key the store reads, in order. */
function recordReads(ctx: FakeObjectContext): string[] {
  const reads: string[] = []
  const get = ctx.get.bind(ctx)
  Object.assign(ctx, { get(name: string) { reads.push(name); return get(name) } })
  return reads
}

const turnIds = (ctx: FakeObjectContext): string[] => {
  const ids: string[] = []
  for (let index = 0; ctx.state.has(sessionTurnStateKey(index)); index++) ids.push((ctx.state.get(sessionTurnStateKey(index)) as SessionTurn).id)
  return ids
}

describe('restateSessionStore: per-turn layout', () => {
  it('keeps durable key names', () => {
    expect(SESSION_STATE_KEY).toBe('zidane_session')
    expect(SESSION_TURN_STATE_KEY_PREFIX).toBe('zidane_turn_')
    expect(sessionTurnStateKey(3)).toBe('zidane_turn_3')
    expect(SESSION_TURNS_STATE_KEY).toBe('zidane_turns')
    expect(LEGACY_SESSION_TURNS_STATE_KEY).toBe('session-turns')
  })

  it('stores one key per turn and writes only the new turns on append', async () => {
    const ctx = createFakeObjectContext('s1')
    const writes = recordWrites(ctx)
    const session = await createSession({ id: 's1', store: restateSessionStore(ctx) })
    expect(writes).toEqual([['set', 'zidane_session']])
    writes.length = 0
    await session.appendTurns([turn('t1'), turn('t2')])
    await session.appendTurns([turn('t3')])
    expect(writes).toEqual([['set', 'zidane_turn_0'], ['set', 'zidane_turn_1'], ['set', 'zidane_turn_2']])
    expect(turnIds(ctx)).toEqual(['t1', 't2', 't3'])
    expect([...ctx.state.keys()].sort()).toEqual(['zidane_session', 'zidane_turn_0', 'zidane_turn_1', 'zidane_turn_2'])
    const loaded = await loadSession(restateSessionStore(ctx), 's1')
    expect(loaded?.turns.map(item => item.id)).toEqual(['t1', 't2', 't3'])
  })

  it('is idempotent by turn id, within a batch, across calls and across store instances', async () => {
    const ctx = createFakeObjectContext('s1')
    const store = restateSessionStore(ctx)
    await createSession({ id: 's1', store })
    await store.appendTurns('s1', [turn('a'), turn('a'), turn('b')])
    await store.appendTurns('s1', [turn('b'), turn('c')])
    const writes = recordWrites(ctx)
    const other = restateSessionStore(ctx)
    await other.appendTurns('s1', [turn('a'), turn('c')])
    expect(writes).toEqual([])
    await other.appendTurns('s1', [turn('c'), turn('d')])
    expect(writes).toEqual([['set', 'zidane_turn_3']])
    expect(turnIds(ctx)).toEqual(['a', 'b', 'c', 'd'])
  })

  it('reads the turns once per store instance, stopping at the first missing key', async () => {
    const ctx = createFakeObjectContext('s1', { zidane_session: header('s1'), zidane_turn_0: turn('a'), zidane_turn_1: turn('b') })
    const reads = recordReads(ctx)
    const store = restateSessionStore(ctx)
    expect((await store.load('s1'))?.turns.map(item => item.id)).toEqual(['a', 'b'])
    await store.appendTurns('s1', [turn('c')])
    await store.load('s1')
    expect(reads).toEqual(['zidane_session', 'zidane_turn_0', 'zidane_turn_1', 'zidane_turn_2'])
  })

  it('save() replaces the turns and clears the surplus keys', async () => {
    const ctx = createFakeObjectContext('s1')
    const store = restateSessionStore(ctx)
    const session = await createSession({ id: 's1', store })
    await session.appendTurns([turn('a'), turn('b'), turn('c')])
    const writes = recordWrites(ctx)
    await store.save({ ...session.toJSON(), turns: [turn('x')] })
    expect(writes).toEqual([['clear', 'zidane_turn_2'], ['clear', 'zidane_turn_1'], ['set', 'zidane_turn_0'], ['set', 'zidane_session']])
    expect(turnIds(ctx)).toEqual(['x'])
    expect((await restateSessionStore(ctx).load('s1'))?.turns.map(item => item.id)).toEqual(['x'])
  })

  it('keeps createdAt and stamps updatedAt from its own clock on every header write', async () => {
    const ctx = createFakeObjectContext('s1')
    const store = restateSessionStore(ctx, { clock: { now: () => 500 } })
    await store.save({ ...header('s1', 1), turns: [] })
    expect(ctx.state.get('zidane_session')).toMatchObject({ createdAt: 500, updatedAt: 500 })
    const later = restateSessionStore(ctx, { clock: { now: () => 900 } })
    await later.saveMeta('s1', { ...header('s1', 1), status: 'running' })
    expect(ctx.state.get('zidane_session')).toMatchObject({ createdAt: 500, updatedAt: 900, status: 'running' })
  })
})

describe('restateSessionStore: migration from the zidane_turns array', () => {
  const arrayState = () => ({ zidane_session: header('s1'), zidane_turns: [turn('a', 2), turn('b', 3)] })

  it('loads the array layout as is', async () => {
    const ctx = createFakeObjectContext('s1', arrayState())
    const data = await restateSessionStore(ctx).load('s1')
    expect(data?.turns.map(item => item.id)).toEqual(['a', 'b'])
    expect(data?.metadata).toEqual({ tag: 'old' })
    expect([...ctx.state.keys()].sort()).toEqual(['zidane_session', 'zidane_turns'])
  })

  it('migrates on the first append: per-turn keys, turn 0 last, then the array key cleared', async () => {
    const ctx = createFakeObjectContext('s1', arrayState())
    const writes = recordWrites(ctx)
    const store = restateSessionStore(ctx)
    await store.appendTurns('s1', [turn('a'), turn('c')])
    expect(writes).toEqual([['set', 'zidane_turn_1'], ['set', 'zidane_turn_2'], ['set', 'zidane_turn_0'], ['clear', 'zidane_turns']])
    expect(turnIds(ctx)).toEqual(['a', 'b', 'c'])
    expect(ctx.state.has('zidane_turns')).toBe(false)
    writes.length = 0
    await store.appendTurns('s1', [turn('d')])
    expect(writes).toEqual([['set', 'zidane_turn_3']])
    const data = await restateSessionStore(ctx).load('s1')
    expect(data?.turns.map(item => item.id)).toEqual(['a', 'b', 'c', 'd'])
    expect(data?.metadata).toEqual({ tag: 'old' })
  })

  it('migrates on a header-only write too', async () => {
    const ctx = createFakeObjectContext('s1', arrayState())
    await restateSessionStore(ctx).updateStatus('s1', 'running')
    expect(turnIds(ctx)).toEqual(['a', 'b'])
    expect(ctx.state.has('zidane_turns')).toBe(false)
    expect(ctx.state.get('zidane_session')).toMatchObject({ status: 'running', createdAt: 10 })
  })

  it('serves the array layout read-only without migrating', async () => {
    const ctx = createFakeObjectContext('s1', arrayState())
    const store = restateSessionStore(ctx, { readOnly: true })
    expect((await store.load('s1'))?.turns.map(item => item.id)).toEqual(['a', 'b'])
    expect(await store.list()).toHaveLength(1)
    const error = await store.appendTurns('s1', [turn('c')]).catch((caught: unknown) => caught)
    expect(isZidaneError(error) && error.code).toBe('session_read_only')
    expect([...ctx.state.keys()].sort()).toEqual(['zidane_session', 'zidane_turns'])
  })

  it('ignores and clears the keys an interrupted migration left behind', async () => {
    // An earlier migration of a longer history was cut off before writing zidane_turn_0: the array still rules.
    const ctx = createFakeObjectContext('s1', { ...arrayState(), zidane_turn_1: turn('stale-1'), zidane_turn_2: turn('stale-2'), zidane_turn_3: turn('stale-3') })
    expect((await restateSessionStore(ctx, { readOnly: true }).load('s1'))?.turns.map(item => item.id)).toEqual(['a', 'b'])
    await restateSessionStore(ctx).appendTurns('s1', [turn('c')])
    expect(turnIds(ctx)).toEqual(['a', 'b', 'c'])
    expect(ctx.state.has('zidane_turn_3')).toBe(false)
    expect(ctx.state.has('zidane_turns')).toBe(false)
  })
})

describe('restateSessionStore: migration from legacy session-turns', () => {
  it('serves a legacy object read-only with a synthesized header', async () => {
    const ctx = createFakeObjectContext('legacy', { 'session-turns': [turn('old-1', 5), turn('old-2', 9)] })
    const store = restateSessionStore(ctx, { readOnly: true })
    const data = await store.load('legacy')
    expect(data?.turns.map(item => item.id)).toEqual(['old-1', 'old-2'])
    expect(data).toMatchObject({ id: 'legacy', createdAt: 5, updatedAt: 9 })
    expect((await store.list())[0]).toMatchObject({ id: 'legacy', createdAt: 5 })
    expect([...ctx.state.keys()]).toEqual(['session-turns'])
  })

  it('migrates to per-turn keys on the first write and stays idempotent', async () => {
    const ctx = createFakeObjectContext('legacy', { 'session-turns': [turn('old-1', 5), turn('old-2', 9)] })
    const store = restateSessionStore(ctx)
    const session = await loadSession(store, 'legacy')
    await session?.appendTurns([turn('old-2'), turn('new-1')])
    expect(turnIds(ctx)).toEqual(['old-1', 'old-2', 'new-1'])
    expect(ctx.state.has('session-turns')).toBe(false)
    await session?.setMetadata({ migrated: true })
    const data = await restateSessionStore(ctx).load('legacy')
    expect(data?.turns.map(item => item.id)).toEqual(['old-1', 'old-2', 'new-1'])
    expect(data?.metadata).toEqual({ migrated: true })
  })

  it('prefers zidane_turns over session-turns', async () => {
    const ctx = createFakeObjectContext('s1', { zidane_session: header('s1'), zidane_turns: [turn('new')], 'session-turns': [turn('old')] })
    expect((await restateSessionStore(ctx).load('s1'))?.turns.map(item => item.id)).toEqual(['new'])
  })
})

describe('restateRuntime: the default session store clock', () => {
  const runSession = async (ctx: FakeObjectContext, coalesce?: boolean): Promise<void> => {
    const runtime = restateRuntime(ctx, { idSeed: 'k', ...(coalesce ? { coalesce } : {}) })
    const session = await createSession({ id: 'k', store: runtime.stores.session, clock: { now: () => 1 } })
    for (const status of ['running', 'idle', 'running', 'completed'] as const) await session.setStatus(status)
    await session.upsertRun({ id: 'r1', status: 'completed', prompt: 'p', startedAt: 1, endedAt: 2, depth: 0 })
  }

  it('stamps header writes from a coalesced clock: one journaled read for up to 8 stamps', async () => {
    const ctx = createFakeObjectContext('k')
    const headers: SessionMeta[] = []
    const set = ctx.set.bind(ctx)
    Object.assign(ctx, { set(name: string, value: unknown) { if (name === 'zidane_session') headers.push(structuredClone(value as SessionMeta)); set(name, value) } })
    await runSession(ctx)
    expect(ctx.nowReads).toBe(1)
    expect(headers).toHaveLength(6)
    for (let index = 1; index < headers.length; index++) expect(headers[index]!.updatedAt).toBeGreaterThan(headers[index - 1]!.updatedAt)
    expect(new Set(headers.map(item => item.createdAt)).size).toBe(1)
  })

  it('is replay-stable: the same run writes the same state', async () => {
    const first = createFakeObjectContext('k')
    const second = createFakeObjectContext('k')
    await runSession(first)
    await runSession(second)
    expect(Object.fromEntries(second.state)).toEqual(Object.fromEntries(first.state))
  })

  it('shares the runtime clock when coalesce is on', async () => {
    const ctx = createFakeObjectContext('k')
    const runtime = restateRuntime(ctx, { idSeed: 'k', coalesce: true })
    const first = await runtime.now()
    const session = await createSession({ id: 'k', store: runtime.stores.session, clock: { now: () => 1 } })
    await session.setStatus('running')
    expect(await runtime.now()).toBe(first + 3)
    expect(ctx.nowReads).toBe(1)
  })
})

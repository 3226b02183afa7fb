import { describe, expect, it } from 'vitest'
import { createSession, loadSession } from '../../src/session/session'
import { SESSION_SCHEMA_VERSION } from '../../src/session/types'
import type { RunTotals, SessionMeta, SessionRun, SessionTurn } from '../../src/session/types'
import { restateRuntime } from '../../src/restate/runtime'
import {
  flushSessionHeader, heldSessionHeader, readRunningTurns, restateSessionStore, SESSION_RUN_STATE_KEY_PREFIX, SESSION_STATE_KEY, SESSION_TURN_STATE_KEY_PREFIX, sessionRunStateKey, sessionTurnStateKey,
} from '../../src/restate/session'
import type { StoredSessionHeader } from '../../src/restate/session'
import { createFakeObjectContext } from '../helpers/restate/fake-context'
import type { FakeObjectContext } from '../helpers/restate/fake-context'

function turn(id: string, createdAt = 1, runId = 'r1'): SessionTurn {
  return { id, runId, role: 'user', content: [{ type: 'text', text: id }], createdAt }
}

function header(id: string, createdAt = 10): SessionMeta {
  return { schemaVersion: SESSION_SCHEMA_VERSION, id, status: 'idle', runs: [], createdAt, updatedAt: createdAt, metadata: { tag: 'old' } }
}

function totals(tokens: number, modelRequests = 1): RunTotals {
  return { usage: { inputTokens: tokens, outputTokens: tokens, cacheReadTokens: 0, cacheWriteTokens: 0 }, costUsd: tokens / 1000, modelRequests, toolCalls: 0, turns: modelRequests }
}

function run(id: string, extra: Partial<SessionRun> = {}): SessionRun {
  return { id, status: 'completed', prompt: `prompt of ${id}`, startedAt: 1, endedAt: 2, depth: 0, ...extra }
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

describe('restateSessionStore: the paged log', () => {
  it('keeps durable key names', () => {
    expect(SESSION_STATE_KEY).toBe('zidane_session')
    expect(SESSION_TURN_STATE_KEY_PREFIX).toBe('zidane_turn_')
    expect(SESSION_RUN_STATE_KEY_PREFIX).toBe('zidane_run_')
    expect(sessionTurnStateKey(3)).toBe('zidane_turn_3')
    expect(sessionRunStateKey(3)).toBe('zidane_run_3')
  })

  it('appends only the new turns, then the header that counts them', async () => {
    const ctx = createFakeObjectContext('s1')
    const writes = recordWrites(ctx)
    const session = await createSession({ id: 's1', store: restateSessionStore(ctx) })
    expect(writes).toEqual([['set', 'zidane_session']])
    writes.length = 0
    await session.appendTurns([turn('t1'), turn('t2')])
    await session.appendTurns([turn('t3')])
    expect(writes).toEqual([['set', 'zidane_turn_0'], ['set', 'zidane_turn_1'], ['set', 'zidane_session'], ['set', 'zidane_turn_2'], ['set', 'zidane_session']])
    expect(turnIds(ctx)).toEqual(['t1', 't2', 't3'])
    expect((ctx.state.get('zidane_session') as StoredSessionHeader).turnCount).toBe(3)
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
    expect(writes).toEqual([['set', 'zidane_turn_3'], ['set', 'zidane_session']])
    expect(turnIds(ctx)).toEqual(['a', 'b', 'c', 'd'])
  })

  it('ignores keys past the header counters (an invocation cut off before its header write)', async () => {
    const ctx = createFakeObjectContext('s1')
    const session = await createSession({ id: 's1', store: restateSessionStore(ctx) })
    await session.appendTurns([turn('a')])
    ctx.state.set(sessionTurnStateKey(1), turn('orphan'))
    const reads = recordReads(ctx)
    const store = restateSessionStore(ctx)
    expect((await store.load('s1'))?.turns.map(item => item.id)).toEqual(['a'])
    expect(reads).toEqual(['zidane_session', 'zidane_turn_0'])
    await store.appendTurns('s1', [turn('b')])
    expect(turnIds(ctx)).toEqual(['a', 'b'])
  })

  it('keeps one key per run record and rewrites only the records that changed', async () => {
    const ctx = createFakeObjectContext('s1')
    const session = await createSession({ id: 's1', store: restateSessionStore(ctx) })
    await session.upsertRun(run('r1', { status: 'running' }))
    await session.upsertRun(run('r1'))
    const writes = recordWrites(ctx)
    await session.upsertRun(run('r2'))
    expect(writes).toEqual([['set', 'zidane_run_1'], ['set', 'zidane_session']])
    expect(ctx.state.get('zidane_session')).not.toHaveProperty('runs')
    const loaded = await loadSession(restateSessionStore(ctx), 's1')
    expect(loaded?.runs.map(item => [item.id, item.status])).toEqual([['r1', 'completed'], ['r2', 'completed']])
  })

  it('writes the header once per run: a starting run, its assistant and results turns and an ending run wait for the next write', async () => {
    const ctx = createFakeObjectContext('s1')
    const session = await createSession({ id: 's1', store: restateSessionStore(ctx) })
    const writes = recordWrites(ctx)
    const header = (): StoredSessionHeader => ctx.state.get('zidane_session') as StoredSessionHeader
    const results = (id: string): SessionTurn => ({ id, runId: 'r1', role: 'user', content: [{ type: 'tool_result', toolUseId: `u-${id}`, content: 'ok' }], createdAt: 1 })
    const calls = (id: string): SessionTurn => ({ id, runId: 'r1', role: 'assistant', content: [{ type: 'tool_use', id: `u-${id}`, name: 'shell', input: {} }], createdAt: 1 })
    await session.upsertRun(run('r1', { status: 'running' }))
    await session.setStatus('running')
    expect(writes).toEqual([['set', 'zidane_run_0']])
    await session.appendTurns([turn('prompt')])
    expect(writes.slice(1)).toEqual([['set', 'zidane_turn_0'], ['set', 'zidane_session']])
    expect(header()).toMatchObject({ status: 'running', runCount: 1, turnCount: 1 })
    writes.length = 0
    // A running session's calls and their results are past the counter: readers read on (readRunningTurns).
    await session.appendTurns([calls('a1')])
    await session.appendTurns([results('r1')])
    expect(writes).toEqual([['set', 'zidane_turn_1'], ['set', 'zidane_turn_2']])
    expect(header().turnCount).toBe(1)
    expect((await readRunningTurns(ctx, header().turnCount, [run('r1', { status: 'running' })])).map(item => item.id)).toEqual(['a1', 'r1'])
    // A wait outside any step writes what is held back.
    flushSessionHeader(ctx)
    expect(header().turnCount).toBe(3)
    writes.length = 0
    flushSessionHeader(ctx)
    await session.appendTurns([results('r2')])
    await session.appendTurns([{ ...turn('answer'), role: 'assistant' }])
    await session.upsertRun(run('r1'))
    await session.setStatus('completed')
    expect(writes).toEqual([['set', 'zidane_turn_3'], ['set', 'zidane_turn_4'], ['set', 'zidane_run_0'], ['set', 'zidane_session']])
    expect(header()).toMatchObject({ status: 'completed', runCount: 1, turnCount: 5 })
    const loaded = await loadSession(restateSessionStore(ctx), 's1')
    expect(loaded?.turns.map(item => item.id)).toEqual(['prompt', 'a1', 'r1', 'r2', 'answer'])
  })

  it('reads a running session\'s turns past its counter across batches, stopping at a key of another run', async () => {
    const ctx = createFakeObjectContext('s1')
    const turnOf = (index: number, runId: string): SessionTurn => ({ id: `t${index}`, runId, role: 'assistant', content: [{ type: 'text', text: 'x' }], createdAt: 1 })
    for (let index = 3; index < 15; index++) ctx.state.set(sessionTurnStateKey(index), turnOf(index, index < 13 ? 'r2/child' : 'r1'))
    const running = [run('r1'), run('r2', { status: 'running' })]
    expect((await readRunningTurns(ctx, 3, running)).map(item => item.id)).toEqual(Array.from({ length: 10 }, (_, offset) => `t${offset + 3}`))
    expect(await readRunningTurns(ctx, 3, [run('r2')])).toEqual([])
    expect(await readRunningTurns(ctx, 15, running)).toEqual([])
  })

  it('holds a new session\'s header back with deferNewSession until the prompt turn writes it', async () => {
    const ctx = createFakeObjectContext('s1')
    const writes = recordWrites(ctx)
    const session = await createSession({ id: 's1', store: restateSessionStore(ctx, { deferNewSession: true }) })
    await session.upsertRun(run('r1', { status: 'running' }))
    await session.setStatus('running')
    expect(writes).toEqual([['set', 'zidane_run_0']])
    await session.appendTurns([turn('prompt')])
    expect(writes.slice(1)).toEqual([['set', 'zidane_turn_0'], ['set', 'zidane_session']])
    expect(ctx.state.get('zidane_session')).toMatchObject({ id: 's1', status: 'running', runCount: 1, turnCount: 1 })
  })

  it('loads from the header the caller already read, reading only the window', async () => {
    const ctx = createFakeObjectContext('s1')
    const written = await createSession({ id: 's1', store: restateSessionStore(ctx) })
    await written.appendTurns([turn('t0')])
    const stored = ctx.state.get('zidane_session') as StoredSessionHeader
    const reads: string[] = []
    const get = ctx.get.bind(ctx)
    Object.assign(ctx, { get: (name: string) => { reads.push(name); return get(name) } })
    const loaded = await loadSession(restateSessionStore(ctx, { header: stored }), 's1')
    expect(loaded?.turns.map(item => item.id)).toEqual(['t0'])
    expect(reads).toEqual(['zidane_turn_0']) // no header read; the session has no run record
    expect(await loadSession(restateSessionStore(ctx, { header: null }), 's1')).toBeNull()
    expect(heldSessionHeader(ctx)).toBeUndefined()
  })

  it('hands out the header its store holds, as its writes left it', async () => {
    const ctx = createFakeObjectContext('s1')
    const session = await createSession({ id: 's1', store: restateSessionStore(ctx) })
    await session.upsertRun(run('r1', { status: 'running' }))
    await session.setStatus('running')
    await session.appendTurns([turn('prompt')])
    expect(heldSessionHeader(ctx)).toEqual(ctx.state.get('zidane_session'))
    expect(heldSessionHeader(ctx)?.turnCount).toBe(1)
  })

  it('writes the header after every record with headerPerBoundary false', async () => {
    const ctx = createFakeObjectContext('s1')
    const session = await createSession({ id: 's1', store: restateSessionStore(ctx, { headerPerBoundary: false }) })
    const writes = recordWrites(ctx)
    await session.upsertRun(run('r1', { status: 'running' }))
    await session.setStatus('running')
    await session.appendTurns([{ ...turn('answer'), role: 'assistant' }])
    expect(writes).toEqual([['set', 'zidane_run_0'], ['set', 'zidane_session'], ['set', 'zidane_session'], ['set', 'zidane_turn_0'], ['set', 'zidane_session']])
  })

  it('keeps the header bounded: its size does not grow with runs, prompts or texts', async () => {
    const ctx = createFakeObjectContext('s1')
    const session = await createSession({ id: 's1', store: restateSessionStore(ctx) })
    const headerBytes = (): number => JSON.stringify(ctx.state.get('zidane_session')).length
    await session.upsertRun(run('r0', { prompt: 'x'.repeat(1000), text: 'y'.repeat(1000), totals: totals(10) }))
    const after1 = headerBytes()
    for (let index = 1; index < 200; index++) await session.upsertRun(run(`r${index}`, { prompt: 'x'.repeat(1000), text: 'y'.repeat(1000), totals: totals(10) }))
    expect(headerBytes()).toBeLessThan(after1 + 40)
    expect((ctx.state.get('zidane_session') as StoredSessionHeader).runCount).toBe(200)
  })

  it('keeps usage totals of the top-level runs in the header, counting a changed record once', async () => {
    const ctx = createFakeObjectContext('s1')
    const session = await createSession({ id: 's1', store: restateSessionStore(ctx) })
    await session.upsertRun(run('r1', { status: 'running' }))
    await session.upsertRun(run('r1', { totals: totals(100, 3) }))
    await session.upsertRun(run('r1', { totals: totals(100, 3), text: 'again' }))
    await session.upsertRun(run('c1', { label: 'child-1', depth: 1, totals: totals(50) }))
    await session.upsertRun(run('r2', { totals: totals(20, 2) }))
    const stored = ctx.state.get('zidane_session') as StoredSessionHeader
    expect(stored.totals).toMatchObject({ usage: { inputTokens: 120 }, modelRequests: 5, turns: 5 })
    expect(stored).toMatchObject({ topLevelRunCount: 2, childRunCount: 1, runCount: 3 })
  })

  it('loads only the turns after the history checkpoint and the runs from the one that wrote it', async () => {
    const ctx = createFakeObjectContext('s1')
    const session = await createSession({ id: 's1', store: restateSessionStore(ctx) })
    for (let index = 0; index < 10; index++) {
      await session.upsertRun(run(`r${index}`))
      await session.appendTurns([turn(`u${index}`, index, `r${index}`), { ...turn(`a${index}`, index, `r${index}`), role: 'assistant' }])
    }
    session.dropHistoryBefore(16)
    await session.setMetadata({ checkpointed: true })
    const reads = recordReads(ctx)
    const loaded = await loadSession(restateSessionStore(ctx), 's1')
    expect(reads).toEqual(['zidane_session', 'zidane_turn_16', 'zidane_turn_17', 'zidane_turn_18', 'zidane_turn_19', 'zidane_run_8', 'zidane_run_9'])
    expect(loaded?.turns.map(item => item.id)).toEqual(['u8', 'a8', 'u9', 'a9'])
    expect(loaded?.runs.map(item => item.id)).toEqual(['r8', 'r9'])
    expect(loaded).toMatchObject({ turnOffset: 16, turnCount: 20, topLevelRunCount: 10, historyFrom: 16 })
    await loaded?.appendTurns([turn('u10', 10, 'r10')])
    await loaded?.upsertRun(run('r10'))
    expect(ctx.state.get(sessionTurnStateKey(20))).toMatchObject({ id: 'u10' })
    expect(ctx.state.get(sessionRunStateKey(10))).toMatchObject({ id: 'r10' })
    expect(ctx.state.get('zidane_session')).toMatchObject({ turnCount: 21, runCount: 11, topLevelRunCount: 11, runFrom: 8 })
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

  it('refuses writes when read-only', async () => {
    const ctx = createFakeObjectContext('s1')
    await createSession({ id: 's1', store: restateSessionStore(ctx) })
    const store = restateSessionStore(ctx, { readOnly: true })
    await expect(store.appendTurns('s1', [turn('a')])).rejects.toMatchObject({ code: 'session_read_only' })
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
    // Six stamps; `running` waits for the next write (once per boundary), so four header writes.
    expect(headers).toHaveLength(4)
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

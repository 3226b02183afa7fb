import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionRunResult } from '../../../contract/session'
import type { LatestRunStart, ReadEventsResult, SyncEventsResult, WatchResult } from '../../../contract/event-log'
import { printLogsOnFailure, startRestateHarness, waitFor } from '../../helpers/restate/restate-harness'
import { loadSessionServices, readEventsUntil } from '../../helpers/restate/session-services'
import type { RestateHarness } from '../../helpers/restate/restate-harness'

/**
 * The session services with a doorbell that never gets through (its ingress is a closed port): everything a run
 * writes reaches the log through its journaled syncs and its sub-agents' journaled appends alone.
 */
describe('event log when the doorbell fails', () => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => {
    process.env.RESTATE_INGRESS_URL = 'http://127.0.0.1:1'
    harness = await startRestateHarness({ services: loadSessionServices() })
  })
  afterAll(async () => {
    delete process.env.RESTATE_INGRESS_URL
    await harness?.stop()
  })
  printLogsOnFailure(() => harness)

  const run = async (key: string, prompt: string): Promise<void> => { await h().call<SessionRunResult>(`session/${key}/run`, { prompt }) }
  const logOnce = async (key: string, done: (events: ReadEventsResult['events']) => boolean): Promise<ReadEventsResult['events']> => readEventsUntil(h(), key, done)
  const types = (events: ReadEventsResult['events']): string[] => events.map(event => event.type)

  it('brings every event of a run with its end', async () => {
    await run('t1~nc-todo', 'todo: one | two')
    const events = await logOnce('t1~nc-todo', all => all.some(event => event.type === 'run:end'))
    expect(types(events)).toEqual(['run:start', 'tool:start', 'tool:end', 'turn:end', 'turn:end', 'run:end'])
  })

  it('keeps where the latest top-level run starts, and whether it ended, through every append', async () => {
    await run('t1~nc-latest', 'hello')
    await run('t1~nc-latest', 'spawn: a')
    const events = await logOnce('t1~nc-latest', all => all.filter(event => event.type === 'run:end' && event.data.label === undefined).length === 2)
    const starts = events.filter(event => event.type === 'run:start')
    expect((await h().call<LatestRunStart | null>('events/t1~nc-latest/latestRun', null)).body).toEqual({ runId: starts[1]?.data.runId, startSeq: starts[1]?.seq, ended: true })
    await h().send('session/t1~nc-latest/run', { prompt: 'ask: still there?' })
    const waiting = await logOnce('t1~nc-latest', all => all.some(event => event.type === 'question'))
    const third = waiting.filter(event => event.type === 'run:start').at(-1)
    expect((await h().call<LatestRunStart | null>('events/t1~nc-latest/latestRun', null)).body).toEqual({ runId: third?.data.runId, startSeq: third?.seq, ended: false })
    expect((await h().call<LatestRunStart | null>('events/t1~nc-never/latestRun', null)).body).toBeNull()
  })

  it('reads a long run\'s turns through one call of the session: its journaled sync says how many there are', async () => {
    const before = h().endpointRequests('session', 'changes')
    await run('t1~nc-long', Array.from({ length: 12 }, () => 'todos:').join('\n')) // 26 turns: past a read without counts
    const events = await logOnce('t1~nc-long', all => all.some(event => event.type === 'run:end'))
    expect(types(events).filter(type => type === 'turn:end')).toHaveLength(13)
    expect(h().endpointRequests('session', 'changes') - before).toBe(1)
  })

  it('asks the session nothing for a sync whose counts the log already read past: quick runs queue one each', async () => {
    await run('t1~nc-covered', 'hello')
    await run('t1~nc-covered', 'hello')
    const events = await logOnce('t1~nc-covered', all => all.filter(event => event.type === 'run:end').length === 2)
    const before = h().endpointRequests('session', 'changes')
    // The first run's journaled sync, as it comes when it queued behind the second's: 2 turns, 1 run record.
    expect((await h().call<SyncEventsResult>('events/t1~nc-covered/sync', { turns: 2, runs: 1, journaled: true })).body).toMatchObject({ count: events.length })
    expect(h().endpointRequests('session', 'changes') - before).toBe(0)
    expect((await h().call<ReadEventsResult>('events/t1~nc-covered/read', { after: 0 })).body.events).toEqual(events)
  })

  it('brings a question while the run waits for the answer', async () => {
    await h().send('session/t1~nc-ask/run', { prompt: 'ask: colour?' })
    const events = await logOnce('t1~nc-ask', all => all.some(event => event.type === 'question'))
    expect(types(events)).toEqual(['run:start', 'tool:start', 'question'])
  })

  it('brings the end of a run that failed for good, written by its clean-up', async () => {
    await h().call(`session/t1~nc-fail/run`, { prompt: 'fail: on purpose' })
    const events = await logOnce('t1~nc-fail', all => all.some(event => event.type === 'run:end'))
    expect(events.at(-1)?.data).toMatchObject({ status: 'failed' })
  })

  it('says whether a viewer follows the log, so the doorbell can ring an unfollowed one seldom', async () => {
    await run('t1~nc-watched', 'hello')
    expect((await h().call<SyncEventsResult>('events/t1~nc-watched/sync', {})).body).toMatchObject({ count: 3, watched: false })
    // A gateway's watch subscribes (and, timing out, unsubscribes): the log counts as followed for a while after.
    expect((await h().call<WatchResult>('event_watch/wait', { key: 't1~nc-watched', after: 3, timeoutMs: 100 })).body).toEqual({ count: null })
    expect((await h().call<SyncEventsResult>('events/t1~nc-watched/sync', {})).body).toMatchObject({ count: 3, watched: true })
  })

  it('wakes a parked watch with the events it appended: the viewer reads nothing', async () => {
    await run('t1~nc-wake', 'hello')
    const first = await logOnce('t1~nc-wake', all => all.some(event => event.type === 'run:end'))
    const watching = h().call<WatchResult>('event_watch/wait', { key: 't1~nc-wake', after: first.length, timeoutMs: 20_000 })
    await waitFor(async () => ((await h().call<SyncEventsResult>('events/t1~nc-wake/sync', {})).body.watched ? true : undefined), 10_000, 'the watch to subscribe')
    await run('t1~nc-wake', 'hello')
    const woken = (await watching).body
    const all = (await h().call<ReadEventsResult>('events/t1~nc-wake/read', { after: 0 })).body.events
    expect(woken.events?.[0]?.seq).toBe(first.length + 1)
    expect(woken.events).toEqual(all.slice(first.length, woken.count ?? 0))
  })

  it('appends each event once whatever cursor a rung sync carries: the doorbell\'s cursor is a hint', async () => {
    await run('t1~nc-hint', 'hello')
    const before = await logOnce('t1~nc-hint', all => all.some(event => event.type === 'run:end'))
    // A viewer follows the log (the rung syncs below read the session), then a sync is rung with the cursor of a log
    // that derived nothing: the session's changes read past it hold the whole run again.
    await h().call<WatchResult>('event_watch/wait', { key: 't1~nc-hint', after: before.length, timeoutMs: 100 })
    const stale = { turns: 0, runs: 0, open: [], from: 0 }
    const synced = (await h().call<SyncEventsResult>('events/t1~nc-hint/sync', { turns: 2, runs: 1, cursor: stale })).body
    expect(synced).toMatchObject({ count: before.length, watched: true })
    // Rung again with the cursor the log returned: the hint is right, and nothing is new.
    expect((await h().call<SyncEventsResult>('events/t1~nc-hint/sync', { turns: 2, runs: 1, cursor: synced.cursor })).body).toMatchObject({ count: before.length })
    expect((await h().call<ReadEventsResult>('events/t1~nc-hint/read', { after: 0 })).body.events).toEqual(before)
  })

  it('keeps no state for a session that does not exist once its watch ends: made-up ids cost nothing', async () => {
    const stateKeys = async (): Promise<string[]> => (await h().query<{ key: string }>("SELECT key FROM state WHERE service_name = 'events' AND service_key = 't1~nc-made-up'")).map(row => row.key)
    const watching = h().call<WatchResult>('event_watch/wait', { key: 't1~nc-made-up', after: 0, timeoutMs: 1_000 })
    await waitFor(async () => (await stateKeys()).length > 0, 10_000, 'the watch to subscribe')
    expect((await watching).body).toEqual({ count: null })
    await waitFor(async () => (await stateKeys()).length === 0, 10_000, 'the unsubscribe to clear the empty log')
    expect((await h().call<ReadEventsResult>('events/t1~nc-made-up/read', { after: 0 })).body).toEqual({ events: [], count: 0 })
    expect(await stateKeys()).toEqual([])
  })

  it('puts the parent\'s spawn call before its children\'s events', async () => {
    await run('t1~nc-spawn', 'spawn: a | b')
    const events = await logOnce('t1~nc-spawn', all => all.some(event => event.type === 'run:end'))
    const spawnStart = events.findIndex(event => event.type === 'tool:start' && event.data.name === 'spawn')
    const firstChild = events.findIndex(event => event.type === 'child:start')
    expect(spawnStart).toBeGreaterThanOrEqual(0)
    expect(firstChild).toBeGreaterThan(spawnStart)
    expect(types(events).filter(type => type === 'child:end')).toHaveLength(2)
  })
})

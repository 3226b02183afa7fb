import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AnswerResult, SessionRunResult, SessionView } from '../../contract/session'
import type { ReadEventsResult } from '../../contract/event-log'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'
import { lateDoorbell, loadSessionServices, readEventsUntil } from '../helpers/restate/session-services'
import type { RestateHarness } from '../helpers/restate/restate-harness'

describe.each(REPLAY_MODES)('session services ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  const bell = lateDoorbell()
  beforeAll(async () => {
    // Always-replay sets the inactivity timeout to 0 (every await suspends): services of their own for each mode.
    const services = loadSessionServices(alwaysReplay ? { ZIDANE_INACTIVITY_TIMEOUT_MS: '0' } : {}, { doorbell: bell.doorbell })
    harness = await startRestateHarness({ services, alwaysReplay })
    // The services' event doorbell rings this server.
    bell.connect(harness.ingressUrl)
  })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  const readLogUntil = async (key: string, done: (events: ReadEventsResult['events']) => boolean): Promise<ReadEventsResult['events']> => readEventsUntil(h(), key, done)

  it('runs a prompt to completion and shows turns and usage', async () => {
    const result = await h().call<SessionRunResult>('session/t1~basic/run', { prompt: 'hello' })
    expect(result.status).toBe(200)
    expect(result.body.text).toBe('Echo: hello')
    const view = await h().call<SessionView>('session/t1~basic/get', null)
    expect(view.body.turns.map(turn => turn.role)).toEqual(['user', 'assistant'])
    expect(view.body.usage.modelRequests).toBe(1)
    expect(view.body.status).toBe('completed')
    const log = await readLogUntil('t1~basic', events => events.some(event => event.type === 'run:end'))
    expect(log.map(event => event.type)).toEqual(['run:start', 'turn:end', 'run:end'])
    expect(log.map(event => event.seq)).toEqual([1, 2, 3])
    expect(log[1]?.data).toMatchObject({ text: 'Echo: hello' })
  })

  it('parks ask_user on an awakeable answered through the resumer', async () => {
    const invocationId = await h().send('session/t1~ask/run', { prompt: 'ask: name?' })
    const pending = await h().waitFor(async () => {
      const view = await h().call<SessionView>('session/t1~ask/get', null)
      return view.body.pending[0]
    }, 20_000, 'a pending question')
    expect(pending.question).toBe('name?')
    // The mode is real: with the inactivity timeout at 0 the waiting run is suspended (and replays when answered).
    const status = async (): Promise<string | undefined> => (await h().query<{ status: string }>(`SELECT status FROM sys_invocation WHERE id = '${invocationId}'`))[0]?.status
    if (alwaysReplay) await h().waitFor(async () => (await status()) === 'suspended', 10_000, 'the waiting run to suspend')
    else expect(await status()).toBe('running')
    const answered = await h().call<AnswerResult>(`resumer/${encodeURIComponent(pending.id)}/answer`, { answer: 'Ada' })
    expect(answered.body.outcome).toBe('answered')
    const again = await h().call<AnswerResult>(`resumer/${encodeURIComponent(pending.id)}/answer`, { answer: 'Bob' })
    expect(again.body.outcome).toBe('already_answered')
    const result = await h().attach<SessionRunResult>(invocationId)
    expect(result.body.text).toBe('You said: Ada')
  })

  it('fans out to child invocations and merges them into the session', async () => {
    const result = await h().call<SessionRunResult>('session/t1~spawn/run', { prompt: 'spawn: a | b | c' })
    expect(result.body.text).toBe('Children answered: Echo: a / Echo: b / Echo: c')
    const view = await h().call<SessionView>('session/t1~spawn/get', null)
    const children = view.body.runs.filter(run => run.label)
    expect(children.map(run => run.label)).toEqual(['child-1', 'child-2', 'child-3'])
    const starts = children.map(run => run.startedAt)
    const ends = children.map(run => run.endedAt ?? 0)
    expect(Math.max(...starts)).toBeLessThan(Math.min(...ends))
    expect(view.body.usage.modelRequests).toBe(5) // the parent's two and one per child
    // Each child streamed its own events under its label, once; the parent did not repeat them when it merged.
    const log = await readLogUntil('t1~spawn', events => events.filter(event => event.type === 'child:end').length === 3)
    const childEvents = log.filter(event => event.type === 'child:start' || event.type === 'child:end')
    expect(childEvents.map(event => `${event.type} ${String(event.data.label)}`).sort()).toEqual(['child:end child-1', 'child:end child-2', 'child:end child-3', 'child:start child-1', 'child:start child-2', 'child:start child-3'])
    expect(log.filter(event => event.type === 'run:start')).toHaveLength(1)
  })

  it('derives each event of a run once from the session, whether the doorbell or the journaled sync brought it', async () => {
    await h().call<SessionRunResult>('session/t1~derived/run', { prompt: 'todo: one | two' })
    await readLogUntil('t1~derived', events => events.some(event => event.type === 'run:end'))
    // The doorbell syncs during the run, the journaled sync at its end: let the doorbell's last sync land.
    await bell.doorbell.idle()
    const log = await h().call<ReadEventsResult>('events/t1~derived/read', { after: 0 })
    const shape = log.body.events.map(event => `${event.type} ${String(event.data.name ?? '')}`)
    expect(shape).toEqual(['run:start ', 'tool:start todowrite', 'tool:end todowrite', 'turn:end ', 'turn:end ', 'run:end '])
    expect(log.body.events.map(event => event.seq)).toEqual([1, 2, 3, 4, 5, 6])
    expect(log.body.count).toBe(6)
  })

  it('brings the question of a run to the log while the run waits for the answer', async () => {
    await h().send('session/t1~sync-ask/run', { prompt: 'ask: colour?' })
    // The run journals a sync with the question: a person sees it even when the doorbell fails.
    const log = await readLogUntil('t1~sync-ask', events => events.some(event => event.type === 'question'))
    expect(log.map(event => event.type)).toEqual(['run:start', 'tool:start', 'question'])
    expect(log.at(-1)?.data).toMatchObject({ question: 'colour?' })
  })
})

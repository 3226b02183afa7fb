import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AnswerResult, SessionRunResult, SessionView } from '../../../contract/session'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../../helpers/restate/restate-harness'
import { loadSessionServices } from '../../helpers/restate/session-services'
import type { RestateHarness } from '../../helpers/restate/restate-harness'

interface JournalRow { index: number; entry_type: string; name?: string }

/**
 * The steering check on the real services and a real server: a message that arrives while a step of the run is in
 * flight joins the run at the next turn boundary, and the check journals nothing of its own (no zero sleep), on the
 * first execution and when every await suspends and replays. After a turn that waited outside any step (a question)
 * the boundary still races a zero sleep, so a message sent during the wait joins at that boundary too.
 */
describe.each(REPLAY_MODES)('the steering check ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => {
    const services = loadSessionServices({ ZIDANE_SANDBOX: 'off', ...(alwaysReplay ? { ZIDANE_INACTIVITY_TIMEOUT_MS: '0' } : {}) })
    harness = await startRestateHarness({ services, alwaysReplay })
  })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  const journal = async (invocationId: string): Promise<string[]> => {
    const rows = await h().query<JournalRow>(`SELECT index, entry_type, name FROM sys_journal WHERE id = '${invocationId}' ORDER BY index`)
    return rows.filter(row => row.entry_type.startsWith('Command:')).map(row => `${row.entry_type.replace('Command: ', '')} ${row.name ?? ''}`.trim())
  }
  const steer = async (key: string, text: string): Promise<void> => {
    expect((await h().call(`inbox/${key}/add`, { text })).status).toBe(200)
  }
  const steeredTurns = async (key: string): Promise<Array<{ id: string; text: string | undefined }>> => {
    const view = await h().call<SessionView>(`session/${key}/get`, null)
    return view.body.turns.filter(turn => turn.id.endsWith('-s')).map(turn => ({ id: turn.id, text: (turn.content[0] as { text?: string } | undefined)?.text }))
  }
  const expectNoMismatch = async (): Promise<void> => {
    expect(await h().query("SELECT id FROM sys_invocation WHERE last_failure_error_code = 'RT0016' OR last_failure LIKE '%mismatch%'")).toEqual([])
    expect(h().logs()).not.toMatch(/RT0016|journal mismatch/i)
  }

  it('takes a message that arrived during a step at the next boundary, with no sleep in the journal', async () => {
    const key = `t1~steer-step-${alwaysReplay ? 'r' : 'n'}`
    const invocationId = await h().send(`session/${key}/run`, { prompt: 'shell: sleep 1.5\nshell: echo two' })
    // The first call's step is in flight: its run command is journaled.
    await h().waitFor(async () => (await journal(invocationId)).some(command => command.startsWith('Run ') && command.endsWith('/tool')), 30_000, 'the first call in flight')
    await steer(key, 'also this')
    const result = await h().attach<SessionRunResult>(invocationId)
    expect(result.status).toBe(200)
    // Joined at turn 2's boundary: the model's next request ends with it (the demo model echoes it).
    expect(result.body.text).toBe('Echo: also this')
    expect((await steeredTurns(key)).map(turn => [turn.id.replace(/^.*-(t\d+-s)$/, '$1'), turn.text])).toEqual([['t2-s', 'also this']])
    const commands = await journal(invocationId)
    expect(commands.filter(command => command.startsWith('Sleep'))).toEqual([])
    // One call to the inbox: its `take` at the boundary that saw the signal (the journal names no call target).
    expect(commands.filter(command => command === 'Call')).toHaveLength(1)
    await expectNoMismatch()
  }, 120_000)

  it('leaves the inbox alone at a boundary when no message came, with no sleep in the journal', async () => {
    const result = await h().call<SessionRunResult>(`session/t1~steer-none-${alwaysReplay ? 'r' : 'n'}/run`, { prompt: 'shell: echo one\nshell: echo two\nshell: echo three' })
    expect(result.status).toBe(200)
    const commands = await journal(result.invocationId ?? '')
    expect(commands.filter(command => command.startsWith('Sleep') || command === 'Call')).toEqual([])
    await expectNoMismatch()
  }, 120_000)

  it('after a turn that waited on a question, takes a message sent during the wait at the next boundary', async () => {
    const key = `t1~steer-ask-${alwaysReplay ? 'r' : 'n'}`
    const invocationId = await h().send(`session/${key}/run`, { prompt: 'ask: colour?\nshell: echo two' })
    const pending = await h().waitFor(async () => (await h().call<SessionView>(`session/${key}/get`, null)).body.pending[0], 30_000, 'the question')
    await steer(key, 'and the weather')
    // The inbox resolved the run's signal before the answer comes.
    await h().waitFor(async () => (await h().query<JournalRow>(`SELECT index, entry_type FROM sys_journal WHERE id = '${invocationId}' AND entry_type LIKE 'Notification: Signal%'`)).length > 0 || alwaysReplay, 30_000, 'the signal journaled')
    expect((await h().call<AnswerResult>(`resumer/${encodeURIComponent(pending.id)}/answer`, { answer: 'blue' })).body.outcome).toBe('answered')
    const result = await h().attach<SessionRunResult>(invocationId)
    expect(result.body.text).toBe('Echo: and the weather')
    expect((await steeredTurns(key)).map(turn => [turn.id.replace(/^.*-(t\d+-s)$/, '$1'), turn.text])).toEqual([['t2-s', 'and the weather']])
    await expectNoMismatch()
  }, 120_000)
})

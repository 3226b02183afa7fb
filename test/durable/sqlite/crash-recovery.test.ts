import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { HEAL_TEXT, INTERRUPTED_TOOL_TEXT } from 'zidane'
import type { SessionData } from 'zidane/session'
import { readLedger, runFixture, startFixture, stopOutsideWrite, waitForLedger } from './crash-harness'
import type { LedgerEntry } from './crash-harness'
import { useTempFiles } from './sqlite-test-helpers'

const count = (entries: LedgerEntry[], event: string): number => entries.filter(entry => entry.event === event).length
const modelTurns = (entries: LedgerEntry[]): number[] => entries.filter(entry => entry.event === 'model').map(entry => entry.turn ?? 0)
const resultsSeenAt = (entries: LedgerEntry[], turn: number): unknown[] => entries.filter(entry => entry.event === 'model' && entry.turn === turn).flatMap(entry => (entry.results ?? []).map(result => result.content))

describe('crash recovery with real processes', () => {
  const files = useTempFiles()
  const envFor = (session: string, extra: Record<string, string> = {}): Record<string, string> => ({ ZDB: files.dbPath(), ZLEDGER: join(files.dir(), `${session}.ledger`), ZSESSION: session, ...extra })

  const loadSession = async (session: string): Promise<SessionData> => {
    const runtime = files.open()
    const data = await runtime.stores.session.load(session)
    runtime.close()
    if (!data) throw new Error(`session ${session} missing`)
    return data
  }

  const expectCompleteSession = (data: SessionData, runId: string, turns: number): void => {
    const expected = [`${runId}-u`]
    for (let turn = 1; turn <= turns; turn++) expected.push(`${runId}-t${turn}-a`, ...(turn < turns ? [`${runId}-t${turn}-r`] : []))
    expect(data.turns.map(turn => turn.id)).toEqual(expected)
    expect(data.turns.map(turn => turn.role)).toEqual(expected.map((_id, index) => (index % 2 === 0 ? 'user' : 'assistant')))
    expect(data.runs.find(run => run.id === runId)?.status).toBe('completed')
  }

  const crashPoints = ['before-model-1', 'after-model-1', 'after-model-2', 'after-model-3', 'during-unsafe', 'during-safe']
  it.each(crashPoints)('SIGKILL %s: the next process resumes, every finished model step reached the provider once', async crashAt => {
    const session = `s-${crashAt}`
    const first = await runFixture(envFor(session, { ZCRASH: crashAt }))
    expect(first.signal).toBe('SIGKILL')
    const second = await runFixture(envFor(session, { ZMODE: 'resume' }))
    expect(second.result?.error).toBeUndefined()
    expect(second.result?.stats).toMatchObject({ status: 'completed', resumed: true, text: 'all done' })
    const ledger = readLedger(envFor(session).ZLEDGER as string)
    expect(modelTurns(ledger)).toEqual([1, 2, 3])
    expect(count(ledger, 'charge')).toBeLessThanOrEqual(1)
    if (crashAt === 'during-unsafe') expect(resultsSeenAt(ledger, 2)).toEqual([INTERRUPTED_TOOL_TEXT])
    else expect(resultsSeenAt(ledger, 2)).toEqual(['charged 5'])
    expect(count(ledger, 'lookup')).toBe(crashAt === 'during-safe' ? 2 : 1)
    expect(resultsSeenAt(ledger, 3)).toEqual(['record r1'])
    expectCompleteSession(await loadSession(session), second.result?.stats?.runId as string, 3)
  })

  // A tool's result is committed with the next model step (one synced commit per turn): a crash after the call ran and
  // before that commit loses the result, and the call is treated as one cut off in its `execute`.
  it.each([
    { crashAt: 'before-model-2', tool: 'unsafe charge', charges: 1, lookups: 1, seenAt2: INTERRUPTED_TOOL_TEXT },
    { crashAt: 'before-model-3', tool: 'safe lookup', charges: 1, lookups: 2, seenAt2: 'charged 5' },
  ])('SIGKILL after the $tool ran and before the next commit: unsafe reported interrupted, safe run again, nothing else twice', async ({ crashAt, charges, lookups, seenAt2 }) => {
    const session = `s-folded-${crashAt}`
    expect((await runFixture(envFor(session, { ZCRASH: crashAt }))).signal).toBe('SIGKILL')
    const second = await runFixture(envFor(session, { ZMODE: 'resume' }))
    expect(second.result?.stats).toMatchObject({ status: 'completed', resumed: true, text: 'all done' })
    const ledger = readLedger(envFor(session).ZLEDGER as string)
    expect(modelTurns(ledger)).toEqual([1, 2, 3])
    expect(count(ledger, 'charge')).toBe(charges)
    expect(count(ledger, 'lookup')).toBe(lookups)
    expect(resultsSeenAt(ledger, 2)).toEqual([seenAt2])
    expect(resultsSeenAt(ledger, 3)).toEqual(['record r1'])
    expectCompleteSession(await loadSession(session), second.result?.stats?.runId as string, 3)
  })

  // The model's turn that asked for the call is committed with the model step (no commit of its own before the call):
  // a run healed after a crash inside the call still finds the call and closes it with the heal text.
  it('SIGKILL inside an unsafe call, then heal: the call the model asked for is in the session, closed as interrupted', async () => {
    const session = 's-heal-unsafe'
    expect((await runFixture(envFor(session, { ZCRASH: 'during-unsafe' }))).signal).toBe('SIGKILL')
    const second = await runFixture(envFor(session, { ZMODE: 'heal-run', ZPROMPT: 'next' }))
    expect(second.result?.error).toBeUndefined()
    const ledger = readLedger(envFor(session).ZLEDGER as string)
    expect(count(ledger, 'charge')).toBe(1)
    const data = await loadSession(session)
    const asked = data.turns.find(turn => turn.role === 'assistant' && turn.content.some(block => block.type === 'tool_use' && block.id === 'call_charge'))
    expect(asked).toBeDefined()
    const healed = data.turns.find(turn => turn.id.startsWith('heal-'))
    expect(healed?.content).toEqual([{ type: 'tool_result', toolUseId: 'call_charge', content: HEAL_TEXT, isError: true }])
  })

  it('with the fold off, a tool result committed before the crash is kept (each result committed at once)', async () => {
    const session = 's-unfolded'
    expect((await runFixture(envFor(session, { ZCRASH: 'before-model-2', ZFOLD: 'off' }))).signal).toBe('SIGKILL')
    const second = await runFixture(envFor(session, { ZMODE: 'resume', ZFOLD: 'off' }))
    expect(second.result?.stats).toMatchObject({ status: 'completed', resumed: true })
    const ledger = readLedger(envFor(session).ZLEDGER as string)
    expect(count(ledger, 'charge')).toBe(1)
    expect(resultsSeenAt(ledger, 2)).toEqual(['charged 5'])
  })

  it('keeps an answer given while no process runs: the run continues without asking again', async () => {
    const session = 's-answer'
    const env = envFor(session, { ZASK: '1' })
    const first = await runFixture({ ...env, ZCRASH: 'waiting-question' })
    expect(first.signal).toBe('SIGKILL')
    const asked = readLedger(env.ZLEDGER as string).find(entry => entry.event === 'asked')
    const answering = files.open()
    expect(await answering.recoverInterruptedRuns()).toMatchObject([{ sessionId: session, waitingOnAwakeable: true }])
    await answering.resolveAwakeable(asked?.id as string, 'yes, go ahead')
    expect(await answering.recoverInterruptedRuns()).toMatchObject([{ sessionId: session, waitingOnAwakeable: false }])
    answering.close()
    const second = await runFixture({ ...env, ZMODE: 'resume' })
    expect(second.result?.stats).toMatchObject({ status: 'completed', resumed: true })
    const ledger = readLedger(env.ZLEDGER as string)
    expect(count(ledger, 'asked')).toBe(1)
    expect(modelTurns(ledger)).toEqual([1, 2, 3, 4])
    expect(resultsSeenAt(ledger, 4)).toEqual(['yes, go ahead'])
    expectCompleteSession(await loadSession(session), second.result?.stats?.runId as string, 4)
  })

  it('announces a question that was waiting at the crash again in the resuming process (same id, resumed: true)', async () => {
    const session = 's-announce-again'
    const env = envFor(session, { ZASK: '1' })
    expect((await runFixture({ ...env, ZCRASH: 'waiting-question' })).signal).toBe('SIGKILL')
    const firstPid = readLedger(env.ZLEDGER as string).find(entry => entry.event === 'asked')?.pid
    const second = startFixture({ ...env, ZMODE: 'resume' })
    await waitForLedger(env.ZLEDGER as string, entries => entries.some(entry => entry.event === 'interaction:request' && entry.pid !== firstPid))
    const announced = readLedger(env.ZLEDGER as string).filter(entry => entry.event === 'interaction:request' || entry.event === 'asked')
    const id = announced[0]?.id
    expect(announced.map(({ event, id: seen, resumed }) => ({ event, id: seen, resumed }))).toEqual([
      { event: 'asked', id, resumed: false },
      { event: 'interaction:request', id, resumed: false },
      { event: 'asked', id, resumed: true },
      { event: 'interaction:request', id, resumed: true },
    ])
    expect(announced[2]?.pid).not.toBe(firstPid)
    const answering = files.open()
    await answering.resolveAwakeable(id as string, 'go')
    answering.close()
    const outcome = await second.done
    expect(outcome.result?.stats).toMatchObject({ status: 'completed', resumed: true })
    expect(count(readLedger(env.ZLEDGER as string), 'interaction:request')).toBe(2)
    expect(resultsSeenAt(readLedger(env.ZLEDGER as string), 4)).toEqual(['go'])
  })

  it("heals instead of resuming a run that waits on an unanswered question ('resume' policy)", async () => {
    const session = 's-unanswered'
    const env = envFor(session, { ZASK: '1' })
    expect((await runFixture({ ...env, ZCRASH: 'waiting-question' })).signal).toBe('SIGKILL')
    const second = await runFixture({ ...env, ZPROMPT: 'next' })
    expect(second.result?.stats).toMatchObject({ status: 'completed', resumed: false })
    const ledger = readLedger(env.ZLEDGER as string)
    expect(count(ledger, 'asked')).toBe(1)
    const data = await loadSession(session)
    const healed = data.turns.find(turn => turn.id.startsWith('heal-'))
    expect(healed?.content).toEqual([{ type: 'tool_result', toolUseId: 'call_ask', content: HEAL_TEXT, isError: true }])
  })

  it('a stopped process whose lease expired is taken over; when it wakes it ends with the takeover text', async () => {
    const session = 's-takeover'
    const env = envFor(session, { ZLEASE: '400', ZHEARTBEAT: '50' })
    const first = startFixture({ ...env, ZSLOW_SAFE: '1200' })
    await waitForLedger(env.ZLEDGER as string, entries => count(entries, 'lookup') === 1)
    await stopOutsideWrite(first.child, env.ZDB as string)
    await new Promise(resolve => setTimeout(resolve, 600))
    const second = await runFixture({ ...env, ZMODE: 'resume' })
    first.child.kill('SIGCONT')
    const firstOutcome = await first.done
    expect(second.result?.stats).toMatchObject({ status: 'completed', resumed: true, text: 'all done' })
    expect(firstOutcome.result?.stats).toMatchObject({ status: 'aborted', reason: 'this run continued in another process' })
    const ledger = readLedger(env.ZLEDGER as string)
    expect(modelTurns(ledger)).toEqual([1, 2, 3])
    expect(count(ledger, 'charge')).toBe(1)
    expect(count(ledger, 'lookup')).toBe(2)
    expectCompleteSession(await loadSession(session), second.result?.stats?.runId as string, 3)
  })

  it('two processes racing to resume one run: exactly one continues it', async () => {
    const session = 's-race'
    const env = envFor(session, { ZSLOW_SAFE: '300' })
    expect((await runFixture({ ...env, ZCRASH: 'after-model-1' })).signal).toBe('SIGKILL')
    const [left, right] = await Promise.all([runFixture({ ...env, ZMODE: 'resume' }), runFixture({ ...env, ZMODE: 'resume' })])
    const outcomes = [left, right].map(outcome => outcome.result)
    const winners = outcomes.filter(outcome => outcome?.stats?.status === 'completed')
    expect(winners).toHaveLength(1)
    const loser = outcomes.find(outcome => outcome?.stats?.status !== 'completed')
    // The loser either found nothing left to resume (null) or lost the claim and ended with the takeover text.
    if (loser?.stats) expect(loser.stats).toMatchObject({ status: 'aborted', reason: 'this run continued in another process' })
    else expect(loser?.stats).toBeNull()
    const ledger = readLedger(env.ZLEDGER as string)
    expect(modelTurns(ledger)).toEqual([1, 2, 3])
    expect(count(ledger, 'charge')).toBe(1)
    expectCompleteSession(await loadSession(session), winners[0]?.stats?.runId as string, 3)
  })
})

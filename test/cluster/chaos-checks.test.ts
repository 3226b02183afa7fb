import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { INTERRUPTED_TOOL_TEXT } from 'zidane'
import { attemptRestarts, checkModelSteps, checkSessions, checkSideEffects, sql } from '../../scripts/chaos/checks'
import { quantile, recoveryTimes } from '../../scripts/chaos/chaos'
import type { KillRecord } from '../../scripts/chaos/killer'
import { ownerOf } from '../../scripts/chaos/model-ledger'
import { ChaosOptionError, parseChaosOptions } from '../../scripts/chaos/options'
import { sessionPrompt } from '../../scripts/chaos/workload'
import type { SessionRecord } from '../../scripts/chaos/workload'

function session(id: string, kind: SessionRecord['kind'], outcome: Partial<SessionRecord>): SessionRecord {
  return { id, kind, ...sessionPrompt(id, kind, '/tmp/ledger'), startedAt: 0, answerStatuses: [], ...outcome }
}

/** An admin API that answers every query with `status` and `body`; counts what it got. */
async function adminAnswering(status: number, body: string): Promise<{ url: string; queries: () => number; close: () => Promise<void> }> {
  let queries = 0
  const server = createServer((request, response) => {
    queries++
    request.resume().on('end', () => response.writeHead(status, { 'content-type': 'application/json' }).end(body))
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    queries: () => queries,
    close: () => new Promise(resolve => server.close(() => resolve())),
  }
}

const restateKill: KillRecord = { kind: 'restate', target: 'restate-2', at: 10_000, backAfterMs: 3_000 }

describe('chaos checks', () => {
  it('a model step requested again inside a kill\'s disruption window is counted as in flight, elsewhere it is a violation', () => {
    const entries = [
      { key: 'p#0', owner: 'c1', at: 9_000 }, { key: 'p#0', owner: 'c1', at: 11_000 },
      { key: 'q#0', owner: 'c2', at: 60_000 }, { key: 'q#0', owner: 'c2', at: 60_050 },
    ]
    const { violations, repeatedInFlight } = checkModelSteps(entries, [restateKill])
    expect(repeatedInFlight).toBe(1)
    expect(violations.map(violation => violation.code)).toEqual(['model_step_repeated'])
    // A gateway kill disturbs no step.
    expect(checkModelSteps(entries.slice(0, 2), [{ ...restateKill, kind: 'gateway' }]).violations).toHaveLength(1)
  })

  it('a repeat with a new attempt of the owner\'s run in between, read from the services\' logs, is in flight; one without is a violation', () => {
    const output = [
      '[services-2] [restate][1970-01-01T00:01:00.020Z][session/89af~c2/run][inv_1abc] INFO: Replaying invocation.',
      '[services-2] [restate][1970-01-01T00:01:00.030Z][session/89af~c3/run][inv_1def] INFO: Starting invocation.',
    ]
    const restarts = attemptRestarts(output)
    expect([...restarts]).toEqual([['c2', [60_020]]])
    const entries = [
      { key: 'q#0', owner: 'c2', at: 60_000 }, { key: 'q#0', owner: 'c2', at: 60_050 },
      { key: 'r#0', owner: 'c3', at: 60_000 }, { key: 'r#0', owner: 'c3', at: 60_050 },
    ]
    const { violations, repeatedInFlight } = checkModelSteps(entries, [], restarts)
    expect(repeatedInFlight).toBe(1)
    expect(violations.map(violation => violation.detail.slice(0, 15))).toEqual(['model step "r#0'])
  })

  it('an unsafe call whose side effect is in the ledger twice is a violation; a missing one is counted', () => {
    const sessions = [session('c1', 'tools', {}), session('c4', 'tools', {}), session('c7', 'tools', {})]
    const { violations, missing } = checkSideEffects('c1\nc4\nc4\n', sessions)
    expect(violations).toEqual([{ code: 'side_effect_repeated', detail: "c4's shell command ran 2 times" }])
    expect(missing).toBe(1)
  })

  it('a run that did not complete, lost a turn, or got its answer twice is a violation', () => {
    const good = session('c2', 'question', { status: 'completed', turns: 2, runTurns: 2, duplicateTurnIds: [], text: 'You said: c2-answer' })
    expect(checkSessions([good])).toEqual([])
    const codes = checkSessions([
      { ...good, status: 'failed' },
      { ...good, turns: 1 },
      { ...good, text: 'You said: c2-answer / c2-answer' },
      { ...good, duplicateTurnIds: ['t1'] },
    ]).map(violation => violation.code)
    expect(codes).toEqual(['run_not_completed', 'turn_lost', 'question_not_delivered', 'turn_duplicated'])
  })

  it('an unsafe call interrupted by a kill may leave its output out of the answer: reported to the model, not a violation', () => {
    const interrupted = session('c1', 'tools', { status: 'completed', turns: 6, runTurns: 6, duplicateTurnIds: [], text: `Done: ok / ${INTERRUPTED_TOOL_TEXT} / The todo list is empty. / 1\tc1 was here` })
    expect(checkSessions([interrupted])).toEqual([])
    expect(checkSessions([{ ...interrupted, text: 'Done: ok / The todo list is empty. / 1\tc1 was here' }]).map(violation => violation.code)).toEqual(['answer_wrong'])
  })

  it('recovery is the wait of the sessions working at a kill for their next model step', () => {
    const sessions = [session('c1', 'tools', { endedAt: 30_000 }), session('c2', 'spawn', { endedAt: 30_000 })]
    const entries = [{ key: 'a', owner: 'c1', at: 9_500 }, { key: 'b', owner: 'c2-a', at: 9_800 }, { key: 'c', owner: 'c1', at: 12_000 }, { key: 'd', owner: 'c2-a', at: 14_000 }]
    expect(recoveryTimes([restateKill], entries, sessions)).toEqual([4_000])
    expect(quantile([1, 2, 3, 4], 0.5)).toBe(2)
    expect(quantile([1, 2, 3, 4], 0.99)).toBe(4)
  })

  it('each model step has an owner: the session, or a child of it', () => {
    expect(ownerOf('shell: echo c7 >> /tmp/x/side-effects.log\ntodo: c7 first#0')).toBe('c7')
    expect(ownerOf('spawn: c9-a | c9-b#1')).toBe('c9')
    expect(ownerOf('c9-b#0')).toBe('c9-b')
  })

  it('options: --kills and --seconds bound the run; an unknown option is refused with its name', () => {
    expect(parseChaosOptions(['--kills', '20', '--seconds', '40'], 7)).toMatchObject({ kills: 20, seconds: 40, seed: 7 })
    expect(parseChaosOptions([], 7).kills).toBeGreaterThanOrEqual(200)
    expect(() => parseChaosOptions(['--kill', '3'])).toThrow(ChaosOptionError)
    expect(() => parseChaosOptions(['--kills', 'many'])).toThrow('--kills needs a whole number')
  })

  it('a query a node cannot serve yet (5xx) goes to the next node; a bad query (4xx) is not tried again', async () => {
    const missingPartition = await adminAnswering(500, JSON.stringify({ message: 'expecting a partition store' }))
    const ready = await adminAnswering(200, JSON.stringify({ rows: [{ id: 'inv_1' }] }))
    const refusing = await adminAnswering(400, JSON.stringify({ message: 'bad query' }))
    try {
      expect(await sql([missingPartition.url, missingPartition.url, ready.url], 'SELECT 1', 1)).toEqual([{ id: 'inv_1' }])
      expect(missingPartition.queries()).toBe(2)
      await expect(sql([refusing.url, ready.url], 'SELECT', 1)).rejects.toThrow('400')
      expect(refusing.queries()).toBe(1)
    } finally {
      await Promise.all([missingPartition.close(), ready.close(), refusing.close()])
    }
  })
})

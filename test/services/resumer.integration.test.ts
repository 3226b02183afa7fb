import * as restate from '@restatedev/restate-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resumerObject } from '../../services/resumer/resumer-object'
import type { AnswerResult, RegisterQuestionRequest, StoredQuestion } from '../../contract/session'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'
import type { RestateHarness } from '../helpers/restate/restate-harness'

const parkedIds = new Map<string, string>()

/** Stands in for a run parked on a question: `park` mints an awakeable, publishes its id and returns its value. */
const parker = restate.object({
  name: 'ResumerTestParker',
  handlers: {
    park: async (ctx: restate.ObjectContext): Promise<unknown> => {
      const awakeable = ctx.awakeable<unknown>()
      parkedIds.set(ctx.key, awakeable.id)
      return awakeable.promise
    },
  },
})

const question = (overrides: Partial<RegisterQuestionRequest> = {}): RegisterQuestionRequest => ({ sessionKey: 't1~s', kind: 'ask_user', question: 'Which region?', createdAt: 1, ...overrides })

describe.each(REPLAY_MODES)('the resumer ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => { harness = await startRestateHarness({ services: [resumerObject, parker], alwaysReplay }) })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  /** A real awakeable id (the resumer resolves it) and the invocation waiting on it. */
  const park = async (name: string): Promise<{ id: string; invocationId: string }> => {
    const invocationId = await h().send(`ResumerTestParker/${alwaysReplay ? 'r' : 'n'}-${name}/park`)
    const id = await h().waitFor(() => parkedIds.get(`${alwaysReplay ? 'r' : 'n'}-${name}`), 20_000, `the awakeable of ${name}`)
    return { id, invocationId }
  }
  const call = async <T>(id: string, handler: string, body: unknown = null): Promise<T> => (await h().call<T>(`resumer/${encodeURIComponent(id)}/${handler}`, body)).body
  const stored = (id: string) => call<StoredQuestion | null>(id, 'describe')
  const scheduledForgets = async (id: string) => h().query<{ status: string }>(`SELECT status FROM sys_invocation WHERE target_service_name = 'resumer' AND target_service_key = '${id}' AND target_handler_name = 'forget'`)

  it("answers a question only for its owner's tenant when the request names one: another's is unknown and stays open", async () => {
    const { id, invocationId } = await park('owned')
    await call(id, 'register', question({ sessionKey: 't1~s' }))
    expect(await call<AnswerResult>(id, 'answer', { answer: 'x', owner: 't2~' })).toEqual({ outcome: 'unknown' })
    expect(await stored(id)).toMatchObject({ state: 'open' })
    expect(await call<AnswerResult>(id, 'answer', { answer: 'eu', owner: 't1~' })).toEqual({ outcome: 'answered', sessionKey: 't1~s' })
    expect((await h().attach(invocationId)).body).toBe('eu')
  })

  it('answers once, resolving the awakeable, then keeps a tombstone (owner and state only) whose removal is scheduled', async () => {
    const { id, invocationId } = await park('answered')
    await call(id, 'register', question())
    expect(await stored(id)).toMatchObject({ state: 'open', question: 'Which region?' })
    expect(await call<AnswerResult>(id, 'answer', { answer: 'eu' })).toEqual({ outcome: 'answered', sessionKey: 't1~s' })
    expect((await h().attach(invocationId)).body).toBe('eu')
    expect(await call<AnswerResult>(id, 'answer', { answer: 'us' })).toEqual({ outcome: 'already_answered', sessionKey: 't1~s' })
    expect(await stored(id)).toEqual({ sessionKey: 't1~s', state: 'answered', endedAt: expect.any(Number) })
    expect(await scheduledForgets(id)).toEqual([{ status: 'scheduled' }])
  })

  it('closes an open question: a later answer is refused with the reason; a closed or answered question stays as it is', async () => {
    const closed = (await park('closed')).id
    await call(closed, 'register', question())
    await call(closed, 'close', { reason: 'cancelled' })
    expect(await stored(closed)).toEqual({ sessionKey: 't1~s', state: 'closed', reason: 'cancelled', endedAt: expect.any(Number) })
    expect(await call<AnswerResult>(closed, 'answer', { answer: 'eu' })).toEqual({ outcome: 'closed', sessionKey: 't1~s', reason: 'cancelled' })
    await call(closed, 'close', { reason: 'finished' })
    await call(closed, 'register', question())
    expect(await stored(closed)).toMatchObject({ state: 'closed', reason: 'cancelled' })
    const done = (await park('done')).id
    await call(done, 'register', question())
    await call(done, 'answer', { answer: 'eu' })
    await call(done, 'close', { reason: 'failed' })
    expect(await stored(done)).toMatchObject({ state: 'answered' })
  })

  it('an expired question (deadline passed, or closed as expired) answers expired', async () => {
    const late = (await park('late')).id
    await call(late, 'register', question({ expiresAt: 2 }))
    expect(await call<AnswerResult>(late, 'answer', { answer: 'eu' })).toEqual({ outcome: 'expired', sessionKey: 't1~s' })
    expect(await stored(late)).toMatchObject({ state: 'expired' })
    const timedOut = (await park('timed-out')).id
    await call(timedOut, 'register', question())
    await call(timedOut, 'close', { reason: 'expired' })
    expect(await call<AnswerResult>(timedOut, 'answer', { answer: 'eu' })).toEqual({ outcome: 'expired', sessionKey: 't1~s' })
  })

  it('forget clears a tombstone (the id is then unknown) but never an open question', async () => {
    const { id } = await park('forgotten')
    await call(id, 'register', question())
    await call(id, 'forget')
    expect(await stored(id)).toMatchObject({ state: 'open' })
    await call(id, 'answer', { answer: 'eu' })
    await call(id, 'forget')
    expect(await stored(id)).toBeNull()
    expect(await call<AnswerResult>(id, 'answer', { answer: 'eu' })).toEqual({ outcome: 'unknown' })
  })
})

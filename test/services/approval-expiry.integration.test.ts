import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AnswerResult, PendingQuestion, SessionRunResult } from '../../contract/session'
import { printLogsOnFailure, REPLAY_MODES, startRestateHarness } from '../helpers/restate/restate-harness'
import { loadSessionServices } from '../helpers/restate/session-services'
import type { RestateHarness } from '../helpers/restate/restate-harness'

const EXPIRED_TEXT = 'The approval of this call expired before anyone answered, so it was denied.'

describe.each(REPLAY_MODES)('approvals with a deadline ($mode)', ({ alwaysReplay }) => {
  let harness: RestateHarness | undefined
  const h = (): RestateHarness => { if (!harness) throw new Error('no harness'); return harness }
  beforeAll(async () => {
    // The services read their settings when they load: a fresh copy with a short approval deadline (and, for the
    // always-replay mode, the inactivity timeout at 0).
    const services = loadSessionServices({ ZIDANE_APPROVAL_TIMEOUT_MS: '1500', ...(alwaysReplay ? { ZIDANE_INACTIVITY_TIMEOUT_MS: '0' } : {}) })
    harness = await startRestateHarness({ services, alwaysReplay })
  })
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  it('an approval nobody answers expires: the call is denied, the run goes on, a late answer gets expired', async () => {
    const invocationId = await h().send('session/t1~expiry/run', { prompt: 'write: a.txt hi', policy: { approve: ['write_file'] } })
    const pending = await h().waitFor(async () => (await h().call<PendingQuestion[]>('session/t1~expiry/pending', null)).body[0], 20_000, 'the approval')
    expect(pending).toMatchObject({ kind: 'approval', tool: 'write_file', input: '{"path":"a.txt","content":"hi"}' })
    expect((pending.expiresAt ?? 0) - pending.createdAt).toBe(1500)
    const result = await h().attach<SessionRunResult>(invocationId)
    expect(result.body).toMatchObject({ status: 'completed', text: `Done: ${EXPIRED_TEXT}` })
    expect((await h().call<PendingQuestion[]>('session/t1~expiry/pending', null)).body).toEqual([])
    const late = await h().call<AnswerResult>(`resumer/${encodeURIComponent(pending.id)}/answer`, { answer: { decision: 'approve' } })
    expect(late.body.outcome).toBe('expired')
  })

  it("a prompt's policy adds denials to the operator's", async () => {
    const result = await h().call<SessionRunResult>('session/t1~deny/run', { prompt: 'write: a.txt hi', policy: { deny: ['write_file'] } })
    expect(result.body.text).toBe("Done: Permission denied for write_file: the prompt's policy denies this tool")
  })
})

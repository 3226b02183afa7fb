import * as restate from '@restatedev/restate-sdk'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SessionRunRequest } from '../../contract/session'
import { SESSION_SERVICE } from '../../contract/session'
import { PromptAdmissions } from '../../ingress-gateway/prompt-admissions'
import { connectIngress } from '../../ingress-gateway/restate-ingress'
import { admissionObject } from '../../services/admission/admission-object'
import { inboxObject } from '../../services/inbox/inbox-object'
import { printLogsOnFailure, startRestateHarness } from '../helpers/restate/restate-harness'
import type { RestateHarness } from '../helpers/restate/restate-harness'

/** Stands in for the session object: every run ends at once. */
const session = restate.object({
  name: SESSION_SERVICE,
  handlers: { run: async (_ctx: restate.ObjectContext, _request: SessionRunRequest) => 'done', deliver: async () => null },
})

describe('the gateway\'s prompt admissions against a real Restate server', () => {
  let harness: RestateHarness | undefined
  beforeAll(async () => { harness = await startRestateHarness({ services: [admissionObject, inboxObject, session] }) }, 60_000)
  afterAll(async () => { await harness?.stop() })
  printLogsOnFailure(() => harness)

  it('admit a burst of prompts each within the body limit, however large their batch would be together', async () => {
    if (!harness) throw new Error('no harness')
    const admissions = new PromptAdmissions(connectIngress(harness.ingressUrl))
    // 41 prompts of 1 MB (the gateway's default body limit) in one tick: the first is admitted alone, the 40 others
    // arrive while it is under way and would go in one `admitMany` of 40 MB, which Restate's ingress refuses.
    const prompt = 'x'.repeat(1000 * 1000)
    const burst = Array.from({ length: 41 }, (_, index) => admissions.admit('big', { sessionKey: `big~s${index}`, run: { prompt }, maxRuns: 100 }, { kind: 'bounded', waitMs: 60_000 }))
    const outcomes = await Promise.all(burst.map(admission => admission.then(answer => answer?.outcome, (error: unknown) => String(error))))
    expect(outcomes).toEqual(Array.from({ length: 41 }, () => 'admitted'))
  }, 120_000)
})

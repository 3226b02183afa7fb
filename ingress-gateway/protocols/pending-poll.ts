import { setTimeout as sleep } from 'node:timers/promises'
import type { PendingQuestion } from '../../contract/session'
import { sessionInterface } from '../../contract/interfaces'
import { restateCall, type RestateIngress } from '../restate-ingress'

const FIRST_POLL_MS = 150
const LONGEST_POLL_MS = 1_000

/**
 * Reads the session's pending questions while `shouldPoll()` says a run has tool calls open (a question or an
 * approval may be listed), every 150 ms at first and backing off to 1 s; idle otherwise (until `changed` resolves: the durable log moved). Questions are not in the
 * event log (they are the session's state, with awakeable ids only the session knows), so this is how a follower
 * learns their ids and answer links. Errors are left to the next poll: the durable log reports Restate's outages.
 */
export async function pollPending(ingress: RestateIngress, key: string, shouldPoll: () => boolean, onPending: (questions: PendingQuestion[]) => void, changed: () => Promise<void>, signal: AbortSignal): Promise<void> {
  let waitMs = FIRST_POLL_MS
  while (!signal.aborted) {
    if (!shouldPoll()) {
      waitMs = FIRST_POLL_MS
      await changed()
      continue
    }
    const view = await restateCall(() => ingress.client.client(sessionInterface, key).get({ limit: 1 })).catch(() => undefined)
    if (view?.exists === true) onPending(view.pending)
    await sleep(waitMs, undefined, { signal }).catch(() => undefined)
    waitMs = Math.min(waitMs * 2, LONGEST_POLL_MS)
  }
}

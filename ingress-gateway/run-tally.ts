import { INBOX_SERVICE, SESSION_SERVICE } from '../services/contract'
import type { RunRow } from './restate-queries'

/** How long a sent steering message counts after its `inbox/add` completed without Restate showing the `deliver` it scheduled. */
export const DELIVERY_GRACE_MS = 5_000
/** How long an admitted send counts while Restate never shows it (the admin API does not answer): then Restate's rows alone count. */
export const ADMITTED_SEND_TTL_MS = 60_000

/** A send the gateway admitted, counted until Restate's rows show it (they count it from then on). */
export interface AdmittedSend {
  /** `run`: a prompt (`session/<key>/run`); `steering`: a message (`inbox/<key>/add`, which schedules a `deliver`). */
  kind: 'run' | 'steering'
  sessionKey: string
  idempotencyKey: string
  admittedAtMs: number
  /** Restate's id of the sent invocation, once the send answered. */
  invocationId?: string
  /** When a query first showed the steering's `inbox/add` completed. */
  addCompletedAtMs?: number
}

/** The tenant's runs at one moment, from Restate's rows and the sends Restate does not show yet. */
export interface RunTally {
  /** Runs running or queued: each counted once, whether Restate shows it or only this process knows it. */
  runs: number
  /** Whether the session has a run running or queued, or steering that will start one: a new message joins it. */
  isBusy(sessionKey: string): boolean
}

interface SessionWork {
  runs: number
  /** Steering not yet run (an unfinished `inbox/add`, or a message sent and not shown): one run for the session at most. */
  messages: number
}

/**
 * Counts runs per session: every unfinished `run`, every `deliver` that is not queued behind another invocation (a
 * queued one only carries messages for the run ahead of it), and for a session with none of those, one run for its
 * steering not yet run. `pending` are sends Restate does not show yet (see {@link stillPending}).
 */
export function tallyRuns(rows: readonly RunRow[], pending: readonly AdmittedSend[], truncated = false): RunTally {
  const sessions = new Map<string, SessionWork>()
  const workOf = (sessionKey: string): SessionWork => {
    const work = sessions.get(sessionKey) ?? { runs: 0, messages: 0 }
    sessions.set(sessionKey, work)
    return work
  }
  for (const row of rows) {
    if (row.status === 'completed') continue
    if (row.service === INBOX_SERVICE) workOf(row.sessionKey).messages += 1
    else if (row.handler === 'run' || row.status !== 'pending') workOf(row.sessionKey).runs += 1
  }
  for (const send of pending) {
    if (send.kind === 'run') workOf(send.sessionKey).runs += 1
    else workOf(send.sessionKey).messages += 1
  }
  let runs = truncated ? Number.POSITIVE_INFINITY : 0
  for (const work of sessions.values()) runs += work.runs > 0 ? work.runs : Math.min(work.messages, 1)
  return { runs, isBusy: sessionKey => sessions.has(sessionKey) }
}

/**
 * The sends of `pending` that `rows` (a query issued after they were admitted) do not show yet: a prompt until its
 * `run` appears, a message until the `deliver` its `add` scheduled appears (or {@link DELIVERY_GRACE_MS} after the
 * `add` completed: it scheduled none, one was on its way). Without rows only {@link ADMITTED_SEND_TTL_MS} applies.
 */
export function stillPending(pending: readonly AdmittedSend[], rows: readonly RunRow[] | undefined, nowMs: number): AdmittedSend[] {
  return pending.filter(send => {
    if (nowMs - send.admittedAtMs >= ADMITTED_SEND_TTL_MS) return false
    if (rows === undefined) return true
    return send.kind === 'run' ? !showsRun(rows, send) : !showsDelivery(rows, send, nowMs)
  })
}

function showsRun(rows: readonly RunRow[], send: AdmittedSend): boolean {
  return rows.some(row => row.service === SESSION_SERVICE && row.handler === 'run' && row.sessionKey === send.sessionKey && row.idempotencyKey === send.idempotencyKey)
}

/** Whether the message's `deliver` shows; records when its `add` was first seen completed. */
function showsDelivery(rows: readonly RunRow[], send: AdmittedSend, nowMs: number): boolean {
  if (send.invocationId === undefined) return false
  if (rows.some(row => row.handler === 'deliver' && row.invokedById === send.invocationId)) return true
  const added = rows.some(row => row.service === INBOX_SERVICE && row.id === send.invocationId && row.status === 'completed')
  if (added) send.addCompletedAtMs ??= nowMs
  return send.addCompletedAtMs !== undefined && nowMs - send.addCompletedAtMs >= DELIVERY_GRACE_MS
}

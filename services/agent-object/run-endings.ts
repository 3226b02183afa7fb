import type * as restate from '@restatedev/restate-sdk'
import { findOpenToolCalls } from 'zidane/session'
import type { Session, SessionRun } from 'zidane/session'
import { closeOpenQuestions } from './close-questions'

/** What the open tool calls of a cancelled run get as their result. */
export const CANCELLED_CALL_TEXT = '[Tool use cancelled] The run was cancelled before this call finished. Its effect may or may not have happened: check before you run it again.'
/** What the open tool calls of a failed run get as their result. */
export const FAILED_CALL_TEXT = '[Tool use failed] The run failed before this call finished. Its effect may or may not have happened: check before you run it again.'

/** How the session's unfinished runs end: their status and reason, when (durable clock), and their open calls' result. */
export interface RunsEnding {
  status: 'cancelled' | 'failed'
  reason: string
  endedAt: number
  text: string
}

/** Ends the session's running runs with `ending`: their open tool calls closed with its text, the session's status set. */
export async function endRunningRuns(session: Session, ending: RunsEnding): Promise<void> {
  const running = session.runs.filter(run => run.status === 'running')
  await session.healInterruptedToolCalls(ending.text, running.at(-1)?.id)
  for (const run of running) await session.upsertRun({ ...run, status: ending.status, endedAt: ending.endedAt, error: ending.reason })
  await session.setStatus(ending.status)
}

/**
 * A run still `running` when the next invocation of its session starts was left by an invocation that Restate ended
 * without the run's clean-up: killed once its attempts ran out (`agentHandlerOptions`), or by an operator. Closes the
 * questions it left listed, then records it `failed` at `endedAt` (the new invocation's journaled start), with a
 * reason naming the step it was in, before the new run starts; issues no command when there is none. Only such an
 * invocation leaves questions listed: a run lists them while it is `running`, and a failure or cancellation closes them before it
 * records the run's end, and a run ends normally only once each question it listed was unlisted (answered or expired).
 */
export async function endKilledRuns(ctx: restate.ObjectContext, session: Session, maxAttempts: number | undefined, endedAt: number): Promise<void> {
  const last = session.runs.filter(run => run.status === 'running').at(-1)
  if (!last) return
  await closeOpenQuestions(ctx, 'failed')
  session.useClock({ now: () => endedAt })
  await endRunningRuns(session, { status: 'failed', reason: killedRunReason(session, last, maxAttempts), endedAt, text: FAILED_CALL_TEXT })
}

/** Why `run` ended without recording it, and the step it was in: its open tool calls, else its next model step. */
export function killedRunReason(session: Session, run: SessionRun, maxAttempts: number | undefined): string {
  const ownTurns = session.turns.filter(turn => turn.runId === run.id)
  const calls = findOpenToolCalls(ownTurns).map(call => `${call.name} (${call.id})`)
  const step = calls.length > 0
    ? `tool call ${calls.join(', ')}`
    : `its model step for turn ${ownTurns.filter(turn => turn.role === 'assistant').length + 1} or the code around it`
  const bound = maxAttempts === undefined ? 'its attempts ran out' : `all ${maxAttempts} of its attempts failed (ZIDANE_MAX_ATTEMPTS)`
  return `invocation_killed: Restate ended the run before it could record its end: ${bound}, or an operator killed it. It was in ${step}; a step that crashes the services process on every attempt ends so.`
}

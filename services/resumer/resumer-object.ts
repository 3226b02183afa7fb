import * as restate from '@restatedev/restate-sdk'
import type { AnswerResult, CloseQuestionRequest, QuestionRecord, QuestionTombstone, RegisterQuestionRequest, StoredQuestion } from '../../contract/session'
import { QUESTION_STATE_KEY, RESUMER_SERVICE } from '../../contract/session'
import type { OwnedAnswerRequest } from '../../contract/session'
import type { EraseQuestionRequest } from '../../contract/session-index'

/** How long the tombstone of an answered, expired or closed question is kept (late answers get 409/410 meanwhile). */
export const TOMBSTONE_RETENTION_MS = 7 * 24 * 60 * 60 * 1000

/** Replaces the question's record by its tombstone and schedules the tombstone's removal. */
function bury(ctx: restate.ObjectContext, tombstone: QuestionTombstone): void {
  ctx.set<QuestionTombstone>(QUESTION_STATE_KEY, tombstone)
  ctx.objectSendClient(Resumer, ctx.key).forget(restate.rpc.sendOpts({ delay: TOMBSTONE_RETENTION_MS }))
}

/** Why `record` cannot take an answer any more, or undefined while it is open. */
function refusal(record: StoredQuestion): AnswerResult | undefined {
  const { sessionKey } = record
  if (record.state === 'answered') return { outcome: 'already_answered', sessionKey }
  if (record.state === 'expired') return { outcome: 'expired', sessionKey }
  if (record.state === 'closed') return { outcome: 'closed', sessionKey, ...(record.reason ? { reason: record.reason } : {}) }
  return undefined
}

async function answer(ctx: restate.ObjectContext, request: OwnedAnswerRequest): Promise<AnswerResult> {
  const record = await ctx.get<StoredQuestion>(QUESTION_STATE_KEY)
  // Another tenant's question is unknown to the caller: nothing tells it apart from a question that never existed.
  if (!record || (request.owner !== undefined && !record.sessionKey.startsWith(request.owner))) return { outcome: 'unknown' }
  const refused = refusal(record)
  if (refused) return refused
  const now = await ctx.date.now()
  if (record.state === 'open' && record.expiresAt !== undefined && now > record.expiresAt) {
    bury(ctx, { sessionKey: record.sessionKey, state: 'expired', reason: 'expired', endedAt: now })
    return { outcome: 'expired', sessionKey: record.sessionKey }
  }
  ctx.resolveAwakeable(ctx.key, request.answer ?? null)
  bury(ctx, { sessionKey: record.sessionKey, state: 'answered', endedAt: now })
  return { outcome: 'answered', sessionKey: record.sessionKey }
}

async function close(ctx: restate.ObjectContext, request: CloseQuestionRequest): Promise<void> {
  const record = await ctx.get<StoredQuestion>(QUESTION_STATE_KEY)
  if (record?.state !== 'open') return
  const endedAt = await ctx.date.now()
  bury(ctx, { sessionKey: record.sessionKey, state: request.reason === 'expired' ? 'expired' : 'closed', reason: request.reason, endedAt })
}

/**
 * The resumer: one virtual object per awakeable id. `register` records a pending question (the session object
 * awaits it before listing the question); `answer` checks the caller's tenant owns it (when the request names an
 * owner) and that it is still open, resolves the awakeable and keeps a
 * tombstone, so answering twice is a clean conflict; `close` tombstones a question whose run ended or stopped
 * waiting (a late answer gets 409/410, not "answered" into the void); `forget` clears a tombstone after
 * {@link TOMBSTONE_RETENTION_MS}; `erase` clears the question of a session being deleted (open or not). Handler names and the state key are durable: add, never rename.
 */
export const resumerObject = restate.object({
  name: RESUMER_SERVICE,
  handlers: {
    register: async (ctx: restate.ObjectContext, request: RegisterQuestionRequest): Promise<void> => {
      const existing = await ctx.get<StoredQuestion>(QUESTION_STATE_KEY)
      if (existing) return
      ctx.set<QuestionRecord>(QUESTION_STATE_KEY, { ...request, awakeableId: ctx.key, state: 'open' })
    },
    answer,
    close,
    forget: async (ctx: restate.ObjectContext): Promise<void> => {
      const record = await ctx.get<StoredQuestion>(QUESTION_STATE_KEY)
      if (record && record.state !== 'open') ctx.clear(QUESTION_STATE_KEY)
    },
    erase: async (ctx: restate.ObjectContext, request: EraseQuestionRequest): Promise<void> => {
      const record = await ctx.get<StoredQuestion>(QUESTION_STATE_KEY)
      if (record?.sessionKey === request.sessionKey) ctx.clear(QUESTION_STATE_KEY)
    },
    describe: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<StoredQuestion | null> => ctx.get<StoredQuestion>(QUESTION_STATE_KEY)),
  },
})

/** The resumer's type, for typed clients. */
export type ResumerObject = typeof resumerObject

const Resumer: ResumerObject = { name: RESUMER_SERVICE }

import * as restate from '@restatedev/restate-sdk'
import type { AnswerRequest, AnswerResult, QuestionRecord, RegisterQuestionRequest } from '../contract'
import { RESUMER_SERVICE } from '../contract'

const RECORD_KEY = 'question'

/**
 * The resumer: one virtual object per awakeable id. `register` records a pending question; `answer` checks it
 * exists and is still open, records the answer and resolves the awakeable, so answering twice is a clean conflict.
 */
export const resumerObject = restate.object({
  name: RESUMER_SERVICE,
  handlers: {
    register: async (ctx: restate.ObjectContext, request: RegisterQuestionRequest): Promise<void> => {
      const existing = await ctx.get<QuestionRecord>(RECORD_KEY)
      if (existing) return
      ctx.set<QuestionRecord>(RECORD_KEY, { ...request, awakeableId: ctx.key, state: 'open' })
    },
    answer: async (ctx: restate.ObjectContext, request: AnswerRequest): Promise<AnswerResult> => {
      const record = await ctx.get<QuestionRecord>(RECORD_KEY)
      if (!record) return { outcome: 'unknown' }
      if (record.state === 'answered') return { outcome: 'already_answered', sessionKey: record.sessionKey }
      const now = await ctx.date.now()
      if (record.expiresAt !== undefined && now > record.expiresAt) {
        ctx.set<QuestionRecord>(RECORD_KEY, { ...record, state: 'expired' })
        return { outcome: 'expired', sessionKey: record.sessionKey }
      }
      ctx.set<QuestionRecord>(RECORD_KEY, { ...record, state: 'answered', answer: request.answer ?? null, answeredAt: now })
      ctx.resolveAwakeable(ctx.key, request.answer ?? null)
      return { outcome: 'answered', sessionKey: record.sessionKey }
    },
    describe: restate.handlers.object.shared(async (ctx: restate.ObjectSharedContext): Promise<QuestionRecord | null> => ctx.get<QuestionRecord>(RECORD_KEY)),
  },
})

/** The resumer's type, for typed clients. */
export type ResumerObject = typeof resumerObject

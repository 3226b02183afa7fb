import type { Interrupt, ResumeEntry } from '@ag-ui/core'
import type { PendingQuestion } from '../../contract/session'

/** The AG-UI `Interrupt.reason` of each kind of question: a free answer, a plan to confirm, a tool call to approve. */
export const INTERRUPT_REASONS = { ask_user: 'input_required', present_plan: 'confirmation', approval: 'tool_call' } as const satisfies Record<PendingQuestion['kind'], string>

/** The answer schema of an approval (and what {@link answerOfResume} reads from its resume payload). */
const APPROVAL_SCHEMA = {
  type: 'object', required: ['approved'], additionalProperties: false,
  properties: { approved: { type: 'boolean' }, reason: { type: 'string', description: 'Why (the model sees it when the call is denied).' } },
}

/** The answer schema of a plan: approve it, or ask for changes (the model gets the payload as JSON). */
const PLAN_SCHEMA = { type: 'object', required: ['approved'], properties: { approved: { type: 'boolean' }, changes: { type: 'string' } } }

/**
 * The AG-UI interrupt of a pending question: its id is the question's (the awakeable's), so a resume entry answers it
 * by that id. An approval names the call it is about (`toolCallId`); `metadata` carries the question's kind, its call
 * and its answer link.
 */
export function interruptOf(question: PendingQuestion & { answerUrl?: string }): Interrupt {
  const responseSchema = question.kind === 'approval' ? APPROVAL_SCHEMA : question.kind === 'present_plan' ? PLAN_SCHEMA : askSchema(question.options)
  const metadata = { kind: question.kind, ...(question.callId === undefined ? {} : { callId: question.callId }), ...(question.tool === undefined ? {} : { tool: question.tool }), ...(question.answerUrl === undefined ? {} : { answerUrl: question.answerUrl }) }
  return {
    id: question.id,
    reason: INTERRUPT_REASONS[question.kind],
    message: question.question,
    ...(question.kind === 'approval' && question.callId !== undefined ? { toolCallId: question.callId } : {}),
    responseSchema,
    ...(question.expiresAt === undefined ? {} : { expiresAt: new Date(question.expiresAt).toISOString() }),
    metadata,
  }
}

function askSchema(options: readonly string[] | undefined): Record<string, unknown> {
  return options === undefined || options.length === 0 ? { type: 'string' } : { type: 'string', enum: [...options] }
}

/** What resolving a question sends: any JSON (`answer`), or an approval's decision (as `POST /v1/awakeables/:id/resolve` takes them). */
export type ResumeAnswer = { answer: unknown } | { decision: 'approve' | 'deny'; reason?: string }

/**
 * The answer a resume entry gives: an approval `{ approved, reason? }` becomes a decision (a cancelled entry denies);
 * any other question gets the payload as its answer (a cancelled entry answers `{ cancelled: true }`, so the run goes on).
 */
export function answerOfResume(entry: ResumeEntry, kind: PendingQuestion['kind'] | undefined): ResumeAnswer {
  const payload: unknown = entry.payload
  if (kind === 'approval' || (kind === undefined && isApproval(payload))) {
    const approved = entry.status === 'resolved' && isApproval(payload) && payload.approved
    const reason = isApproval(payload) && typeof payload.reason === 'string' && payload.reason !== '' ? payload.reason : entry.status === 'cancelled' ? 'cancelled by the user' : undefined
    return { decision: approved ? 'approve' : 'deny', ...(reason === undefined ? {} : { reason }) }
  }
  if (entry.status === 'cancelled') return { answer: { cancelled: true } }
  return { answer: payload ?? null }
}

function isApproval(payload: unknown): payload is { approved: boolean; reason?: unknown } {
  return typeof payload === 'object' && payload !== null && typeof (payload as { approved?: unknown }).approved === 'boolean'
}

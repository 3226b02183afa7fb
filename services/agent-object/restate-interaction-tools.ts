import * as restate from '@restatedev/restate-sdk'
import type { JsonValue } from 'zidane/durable'
import { raceWithTimeout } from 'zidane/restate'
import type { ToolContext, ToolDef, ToolResult } from 'zidane'
import type { PendingQuestion } from '../../contract/session'
import { listPendingQuestion, unlistPendingQuestion } from './pending-questions'
import type { QuestionActivity } from './pending-questions'
import type { ResumerObject } from '../resumer/resumer-object'
import { RESUMER_SERVICE } from '../../contract/session'


const Resumer: ResumerObject = { name: RESUMER_SERVICE }

/** The names of {@link restateInteractionTools}' tools, in their order. */
export const INTERACTION_TOOL_NAMES = ['ask_user', 'present_plan'] as const

/**
 * `ask_user` and `present_plan` for the session object: each call mints an awakeable, registers the question with
 * the resumer and waits for the registration (so a question is never listed before an answer to it can be taken),
 * lists it in the session's pending questions, and parks until the resumer resolves it. A parked invocation
 * suspends, so a question can wait for days. A question that times out is closed at the resumer (`expired`).
 */
export function restateInteractionTools(ctx: restate.ObjectContext, options: { timeoutMs?: number; activity?: QuestionActivity } = {}): ToolDef[] {
  const tool = (kind: PendingQuestion['kind'], description: string, field: 'question' | 'plan'): ToolDef => ({
    spec: {
      name: kind,
      description,
      inputSchema: { type: 'object', properties: { [field]: { type: 'string', minLength: 1 }, ...(field === 'question' ? { options: { type: 'array', items: { type: 'string' } } } : {}) }, required: [field], additionalProperties: false },
    },
    journal: 'self',
    execute: (input, toolCtx) => parkQuestion(ctx, kind, String(input[field]), input.options, toolCtx, options.timeoutMs, options.activity),
  })
  return [
    tool('ask_user', 'Ask the user a question and wait for the answer.', 'question'),
    tool('present_plan', 'Present a plan to the user and wait for approval or changes.', 'plan'),
  ]
}

/**
 * Lists `question` in the session's pending questions (registered with the resumer first) and parks the call on its
 * awakeable until it is answered (the answer's text) or `timeoutMs` passes (an error result). Journals itself through
 * `ctx`: call it outside any step, on every replay alike. The listing is noted in the invocation's `activity`.
 */
export async function parkQuestion(ctx: restate.ObjectContext, kind: PendingQuestion['kind'], question: string, choices: JsonValue | undefined, toolCtx: ToolContext, timeoutMs: number | undefined, activity?: QuestionActivity): Promise<ToolResult> {
  const awakeable = ctx.awakeable<JsonValue>()
  const createdAt = await ctx.date.now()
  const pending: PendingQuestion = { id: awakeable.id, kind, callId: toolCtx.callId, question, createdAt, ...(Array.isArray(choices) ? { options: choices.map(String) } : {}), ...(timeoutMs ? { expiresAt: createdAt + timeoutMs } : {}) }
  await listPendingQuestion(ctx, pending, activity)
  await toolCtx.hooks.callHook('interaction:request', { kind, sessionId: toolCtx.sessionId, runId: toolCtx.runId, callId: toolCtx.callId, question, awakeable: { id: awakeable.id } })
  const outcome = await raceWithTimeout(ctx, awakeable.promise, { promises: restate.RestatePromise, ...(timeoutMs ? { timeoutMs } : {}) })
  await unlistPendingQuestion(ctx, awakeable.id)
  if (outcome.timedOut) {
    ctx.objectSendClient(Resumer, awakeable.id).close({ reason: 'expired' })
    return { content: 'No answer arrived before the deadline.', isError: true }
  }
  return { content: typeof outcome.value === 'string' ? outcome.value : JSON.stringify(outcome.value) }
}

import type * as restate from '@restatedev/restate-sdk'
import type { InteractionDone, InteractionRequest, RequestInteraction, ToolCallInfo, ToolPermission } from 'zidane'
import type { PendingQuestion, PromptToolPolicy } from '../../contract/session'
import { APPROVAL_INPUT_PREVIEW_CHARS, RESUMER_SERVICE } from '../../contract/session'
import type { ResumerObject } from '../resumer/resumer-object'
import { listPendingQuestion, unlistPendingQuestion } from './pending-questions'
import type { QuestionActivity } from './pending-questions'

const Resumer: ResumerObject = { name: RESUMER_SERVICE }

/** The operator's tool policy: tools that need a person's approval, and tools that are denied. */
export interface ToolPolicy {
  approve: readonly string[]
  deny: readonly string[]
}

/**
 * `canUseTool` of the operator's policy and a prompt's own: denied tools are refused (the operator's first), approval
 * tools ask, every other tool runs. A prompt only adds approvals and denials; it never lifts the operator's.
 */
export function policyPermission(policy: ToolPolicy, prompt: PromptToolPolicy = {}): ((call: ToolCallInfo) => ToolPermission) | undefined {
  const approve = [...policy.approve, ...(prompt.approve ?? [])]
  const promptDeny = prompt.deny ?? []
  if (approve.length === 0 && policy.deny.length === 0 && promptDeny.length === 0) return undefined
  return call => {
    if (policy.deny.includes(call.name)) return { deny: 'the operator\'s policy denies this tool' }
    if (promptDeny.includes(call.name)) return { deny: 'the prompt\'s policy denies this tool' }
    return approve.includes(call.name) ? 'ask' : 'allow'
  }
}

/**
 * How approval questions reach a person in the deployment: registered with the resumer (awaited, so an answer is
 * never refused once the question is listed), then listed in the session's pending questions with the tool, its input
 * (cut to a readable size) and, with `timeoutMs`, its deadline; unlisted once the answer arrived, and closed at the
 * resumer as `expired` when the deadline passed first (a late answer then gets 410). Journaled through the object
 * context itself (`journal: 'self'`), never inside a step. `beforeWait` runs first (the deployment journals the run's
 * unsynced events there).
 */
export function restateApprovals(ctx: restate.ObjectContext, options: { timeoutMs?: number; beforeWait?: () => void; activity?: QuestionActivity } = {}): RequestInteraction {
  const request = async (interaction: InteractionRequest): Promise<InteractionDone> => {
    options.beforeWait?.()
    const id = interaction.awakeable.id
    const createdAt = await ctx.date.now()
    await listPendingQuestion(ctx, approvalQuestion(interaction, createdAt, options.timeoutMs), options.activity)
    return async outcome => {
      await unlistPendingQuestion(ctx, id)
      if (outcome?.timedOut === true) ctx.objectSendClient(Resumer, id).close({ reason: 'expired' })
    }
  }
  return Object.assign(request, { journal: 'self' as const })
}

function approvalQuestion(interaction: InteractionRequest, createdAt: number, timeoutMs: number | undefined): PendingQuestion {
  const { tool } = interaction
  return {
    id: interaction.awakeable.id,
    kind: 'approval',
    callId: interaction.callId,
    question: cut(interaction.question, APPROVAL_INPUT_PREVIEW_CHARS),
    createdAt,
    ...(timeoutMs ? { expiresAt: createdAt + timeoutMs } : {}),
    ...(tool ? { tool: tool.name, input: cut(JSON.stringify(tool.input), APPROVAL_INPUT_PREVIEW_CHARS) } : {}),
  }
}

function cut(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars)}…` : text
}

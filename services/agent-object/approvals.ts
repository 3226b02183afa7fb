import type * as restate from '@restatedev/restate-sdk'
import type { InteractionRequest, RequestInteraction, ToolCallInfo, ToolPermission } from 'zidane'
import { listPendingQuestion, unlistPendingQuestion } from './pending-questions'

/** The operator's tool policy: tools that need a person's approval, and tools that are denied. */
export interface ToolPolicy {
  approve: readonly string[]
  deny: readonly string[]
}

/** `canUseTool` of the policy: denied tools are refused, approval tools ask, every other tool runs. */
export function policyPermission(policy: ToolPolicy): ((call: ToolCallInfo) => ToolPermission) | undefined {
  if (policy.approve.length === 0 && policy.deny.length === 0) return undefined
  return call => {
    if (policy.deny.includes(call.name)) return { deny: 'the operator\'s policy denies this tool' }
    return policy.approve.includes(call.name) ? 'ask' : 'allow'
  }
}

/**
 * How approval questions reach a person in the deployment: registered with the resumer (awaited, so an answer is
 * never refused once the question is listed), then listed in the session's pending questions; unlisted once the
 * answer arrived. Journaled through the object context itself (`journal: 'self'`), never inside a step.
 */
export function restateApprovals(ctx: restate.ObjectContext): RequestInteraction {
  const request = async (interaction: InteractionRequest): Promise<() => Promise<void>> => {
    const id = interaction.awakeable.id
    const createdAt = await ctx.date.now()
    const question = interaction.question.length > 2_000 ? `${interaction.question.slice(0, 2_000)}…` : interaction.question
    await listPendingQuestion(ctx, { id, kind: 'approval', question, createdAt })
    return async () => unlistPendingQuestion(ctx, id)
  }
  return Object.assign(request, { journal: 'self' as const })
}

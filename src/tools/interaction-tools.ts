import type { JsonValue } from '../json'
import { stepKey } from '../durable/runtime'
import type { InteractionKind, InteractionRequest, RequestInteraction } from '../agent/types'
import { waitAnnounced } from '../agent/wait-announced'
import type { ToolContext, ToolDef, ToolResult } from './tool'

/** Options of `createInteractionTools`: how a question reaches a human, and how long to wait (default: forever). */
export interface InteractionToolsOptions {
  requestInteraction: RequestInteraction
  timeoutMs?: number
}

/**
 * `ask_user` and `present_plan`: the question is sent once (inside a step) and the call waits on an awakeable, so on a
 * durable runtime an answer given while no process runs is kept; a later process that resumes the wait while the
 * answer is missing sends it again with `resumed: true`. Answer with `runtime.resolveAwakeable(id, answer)`.
 */
export function createInteractionTools(options: InteractionToolsOptions): ToolDef[] {
  return [
    interactionTool(options, 'ask_user', 'Ask the user a question and wait for the answer.', {
      type: 'object',
      properties: { question: { type: 'string', minLength: 1 }, options: { type: 'array', items: { type: 'string' } } },
      required: ['question'],
      additionalProperties: false,
    }),
    interactionTool(options, 'present_plan', 'Present a plan to the user and wait for approval or changes.', {
      type: 'object',
      properties: { plan: { type: 'string', minLength: 1 } },
      required: ['plan'],
      additionalProperties: false,
    }),
  ]
}

function interactionTool(options: InteractionToolsOptions, kind: InteractionKind, description: string, inputSchema: ToolDef['spec']['inputSchema']): ToolDef {
  return {
    spec: { name: kind, description, inputSchema },
    journal: 'self',
    execute: async (input, ctx) => waitForAnswer(options, kind, String(input.question ?? input.plan ?? ''), input.options, ctx),
  }
}

async function waitForAnswer(options: InteractionToolsOptions, kind: InteractionKind, question: string, choices: JsonValue | undefined, ctx: ToolContext): Promise<ToolResult> {
  const awakeable = ctx.runtime.awakeable<JsonValue>(stepKey(ctx.runId, 'custom', `t${ctx.turn}`, ctx.callId, 'awakeable'), options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs })
  const request: InteractionRequest = { kind, sessionId: ctx.sessionId, runId: ctx.runId, callId: ctx.callId, question, awakeable: { id: awakeable.id }, ...(Array.isArray(choices) ? { options: choices.map(String) } : {}) }
  const announce = async (sent: InteractionRequest): Promise<void> => {
    await options.requestInteraction(sent)
    await ctx.hooks.callHook('interaction:request', sent)
  }
  let sentLive = false
  await ctx.runtime.step(stepKey(ctx.runId, 'interaction', `t${ctx.turn}`, ctx.callId), async () => {
    sentLive = true
    await announce(request)
    return true
  })
  const outcome = await waitAnnounced(ctx.runtime, awakeable, sentLive, () => announce({ ...request, resumed: true }))
  if (outcome.timedOut) return { content: 'No answer arrived before the deadline.', isError: true }
  return { content: typeof outcome.value === 'string' ? outcome.value : JSON.stringify(outcome.value) }
}

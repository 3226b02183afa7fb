import type { MessageCreateParamsBase, ThinkingConfigParam } from '@anthropic-ai/sdk/resources/messages'
import type { ModelRequest, ThinkingConfig } from '../provider'
import { withCacheBreakpoints } from './cache-breakpoints'
import { toWireMessages, toWireTools } from './to-wire-content'

/** Provider-level defaults a request can override. */
export interface WireDefaults {
  model: string
  maxTokens: number
  thinking?: ThinkingConfig
}

function toWireThinking(thinking: ThinkingConfig): ThinkingConfigParam {
  return thinking.type === 'enabled' ? { type: 'enabled', budget_tokens: thinking.budgetTokens } : { type: 'disabled' }
}

/**
 * The Messages API body for one request (without `stream`). Sampling parameters (`temperature`, `top_p`, `top_k`) are
 * never sent: API version 2026-10-21 rejects them.
 */
export function toWireRequest(request: ModelRequest, defaults: WireDefaults): MessageCreateParamsBase {
  const params: MessageCreateParamsBase = {
    model: request.model ?? defaults.model,
    max_tokens: request.maxTokens ?? defaults.maxTokens,
    messages: toWireMessages(request.messages),
  }
  if (request.system !== undefined && request.system !== '') params.system = request.system
  if (request.tools.length > 0) params.tools = toWireTools(request.tools)
  const thinking = request.thinking ?? defaults.thinking
  if (thinking !== undefined) params.thinking = toWireThinking(thinking)
  return request.cache === true ? withCacheBreakpoints(params) : params
}

import type { ContentBlockParam, MessageCreateParamsBase, MessageParam, TextBlockParam, Tool, ToolUnion } from '@anthropic-ai/sdk/resources/messages'

const ephemeral = { type: 'ephemeral' } as const

/** The API allows at most this many `cache_control` breakpoints per request; we place at most three. */
export const maxCacheBreakpoints = 4

function isCacheable(block: ContentBlockParam): boolean {
  if (block.type === 'thinking' || block.type === 'redacted_thinking') return false
  return block.type !== 'text' || block.text !== ''
}

function markLastTool(tools: ToolUnion[] | undefined): ToolUnion[] | undefined {
  if (tools === undefined || tools.length === 0) return tools
  const last = tools.at(-1) as Tool
  return [...tools.slice(0, -1), { ...last, cache_control: ephemeral }]
}

function markSystem(system: MessageCreateParamsBase['system']): MessageCreateParamsBase['system'] {
  if (system === undefined || system === '') return system
  const blocks: TextBlockParam[] = typeof system === 'string' ? [{ type: 'text', text: system }] : system
  return blocks.map((block, index) => index === blocks.length - 1 ? { ...block, cache_control: ephemeral } : block)
}

function markContent(content: ContentBlockParam[], blockIndex: number): ContentBlockParam[] {
  return content.map((block, index) => index === blockIndex ? { ...block, cache_control: ephemeral } as ContentBlockParam : block)
}

function markLastBlock(messages: MessageParam[]): MessageParam[] {
  for (let messageIndex = messages.length - 1; messageIndex >= 0; messageIndex -= 1) {
    const message = messages[messageIndex]
    if (message === undefined || typeof message.content === 'string') continue
    const blockIndex = message.content.findLastIndex(isCacheable)
    if (blockIndex === -1) continue
    const marked = { ...message, content: markContent(message.content, blockIndex) } as MessageParam
    return messages.map((original, index) => index === messageIndex ? marked : original)
  }
  return messages
}

/**
 * Places ephemeral (5-minute) cache breakpoints on the stable prefix: the last tool, the system prompt, and the last
 * cacheable block of the conversation (thinking and empty text cannot carry one, so the walk goes back past them).
 * That is at most three of the four the API allows; the API reuses earlier prefixes by looking back from each one.
 */
export function withCacheBreakpoints(params: MessageCreateParamsBase): MessageCreateParamsBase {
  const marked: MessageCreateParamsBase = { ...params, messages: markLastBlock(params.messages) }
  const tools = markLastTool(params.tools)
  if (tools !== undefined) marked.tools = tools
  const system = markSystem(params.system)
  if (system !== undefined) marked.system = system
  return marked
}

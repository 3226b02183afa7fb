import type { ChatCompletionChunk } from 'openai/resources/chat/completions'
import type { CompletionUsage } from 'openai/resources/completions'
import { ProviderError } from '../../errors/zidane-error'
import type { JsonObject } from '../../json'
import type { ContentBlock, Usage } from '../content'
import { emptyUsage } from '../content'
import type { ModelDelta, StopReason } from '../provider'

/** A tool call as its pieces arrive: `id` and `name` in the first chunk, `arguments` split across many. */
interface PendingCall { blockIndex: number; id: string; name: string; arguments: string }

/** The folded stream: blocks in order of first appearance, the raw finish reason and the usage chunk. */
export interface AccumulatedChat {
  content: ContentBlock[]
  finishReason: string | undefined
  usage: Usage | undefined
  model: string
  truncatedToolUse: boolean
}

/** Chunk fields some OpenAI-compatible servers add for reasoning models (DeepSeek, vLLM, OpenRouter). */
type ReasoningDelta = { reasoning_content?: string | null; reasoning?: string | null }

/** The usage chunk in our terms: `prompt_tokens` includes cached tokens, which we count apart. */
export function toChatUsage(usage: CompletionUsage): Usage {
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0
  return { ...emptyUsage(), inputTokens: Math.max(0, usage.prompt_tokens - cached), outputTokens: usage.completion_tokens, cacheReadTokens: cached }
}

/** Folds Chat Completions chunks (choice 0) into content blocks, reporting text, reasoning and tool-argument deltas. */
export class ChatStreamAccumulator {
  readonly #content: (ContentBlock | PendingCall)[] = []
  readonly #calls = new Map<number, PendingCall>()
  #finishReason: string | undefined
  #usage: Usage | undefined
  #model = ''

  constructor(private readonly onDelta: (delta: ModelDelta) => void) {}

  /** Applies one chunk. */
  apply(chunk: ChatCompletionChunk): void {
    if (chunk.model) this.#model = chunk.model
    if (chunk.usage) this.#usage = toChatUsage(chunk.usage)
    const choice = chunk.choices[0]
    if (choice === undefined) return
    const delta = choice.delta as ChatCompletionChunk.Choice.Delta & ReasoningDelta
    const reasoning = delta.reasoning_content ?? delta.reasoning
    if (typeof reasoning === 'string' && reasoning !== '') this.#appendText('thinking', reasoning)
    if (typeof delta.content === 'string' && delta.content !== '') this.#appendText('text', delta.content)
    for (const call of delta.tool_calls ?? []) this.#applyCall(call)
    if (choice.finish_reason) this.#finishReason = choice.finish_reason
  }

  /** The folded message; throws a retryable `provider_invalid_response` when tool arguments are not JSON (unless cut by `length`). */
  finish(): AccumulatedChat {
    let truncatedToolUse = false
    const content: ContentBlock[] = []
    for (const block of this.#content) {
      if (!('arguments' in block)) { content.push(block); continue }
      const cut = this.#finishReason === 'length' && block === this.#content.at(-1)
      const input = parseArguments(block.arguments, cut)
      if (input === undefined && cut) { truncatedToolUse = true; continue }
      if (input === undefined) throw new ProviderError(`The model's arguments for ${block.name} are not a JSON object`, { code: 'provider_invalid_response', retryable: true })
      content.push({ type: 'tool_use', id: block.id, name: block.name, input })
    }
    return { content, finishReason: this.#finishReason, usage: this.#usage, model: this.#model, truncatedToolUse }
  }

  #appendText(kind: 'text' | 'thinking', text: string): void {
    const last = this.#content.at(-1)
    if (last !== undefined && 'type' in last && last.type === 'text' && kind === 'text') last.text += text
    else if (last !== undefined && 'type' in last && last.type === 'thinking' && kind === 'thinking') last.thinking += text
    else this.#content.push(kind === 'text' ? { type: 'text', text } : { type: 'thinking', thinking: text })
    this.onDelta({ kind, index: this.#content.length - 1, delta: text })
  }

  #applyCall(piece: ChatCompletionChunk.Choice.Delta.ToolCall): void {
    let call = this.#calls.get(piece.index)
    if (call === undefined) {
      call = { blockIndex: this.#content.length, id: piece.id ?? `call_${piece.index}`, name: '', arguments: '' }
      this.#calls.set(piece.index, call)
      this.#content.push(call)
    }
    if (piece.id) call.id = piece.id
    if (piece.function?.name) call.name += piece.function.name
    const args = piece.function?.arguments
    if (args) {
      call.arguments += args
      this.onDelta({ kind: 'tool_input', index: call.blockIndex, delta: args })
    }
  }
}

/** Tool arguments as an object; empty arguments are `{}` unless the stream was cut (`length`), where they mean unfinished. */
function parseArguments(text: string, cut: boolean): JsonObject | undefined {
  if (text.trim() === '') return cut ? undefined : {}
  try {
    const value: unknown = JSON.parse(text)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as JsonObject : undefined
  } catch {
    return undefined
  }
}

/** The finish reason as our stop reason: `length` → `max_tokens`, `content_filter` → `refusal`; missing or unknown by content. */
export function toChatStopReason(finishReason: string | undefined, content: readonly ContentBlock[]): StopReason {
  if (finishReason === 'stop') return 'end_turn'
  if (finishReason === 'tool_calls' || finishReason === 'function_call') return 'tool_use'
  if (finishReason === 'length') return 'max_tokens'
  if (finishReason === 'content_filter') return 'refusal'
  return content.some(block => block.type === 'tool_use') ? 'tool_use' : 'end_turn'
}

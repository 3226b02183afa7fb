import { ProviderError } from '../../errors/zidane-error'
import type { JsonObject } from '../../json'
import type { ContentBlock, TextBlock, ThinkingBlock, Usage } from '../content'
import { emptyUsage } from '../content'
import type { ModelDelta, StopReason } from '../provider'
import type { AiSdkStreamPart, AiSdkUsage } from './language-model'

/** What the stream folded into: blocks in order, the unified finish reason, usage and the served model. */
export interface AccumulatedAiSdk { content: ContentBlock[]; finishReason: string | undefined; usage: Usage; modelId: string | undefined }

/** The AI SDK's usage in our terms: uncached input apart from cache reads and writes. */
export function toAiSdkUsage(usage: AiSdkUsage): Usage {
  const cacheRead = usage.inputTokens.cacheRead ?? 0
  const cacheWrite = usage.inputTokens.cacheWrite ?? 0
  const input = usage.inputTokens.noCache ?? Math.max(0, (usage.inputTokens.total ?? 0) - cacheRead - cacheWrite)
  return { ...emptyUsage(), inputTokens: input, outputTokens: usage.outputTokens.total ?? 0, cacheReadTokens: cacheRead, cacheWriteTokens: cacheWrite }
}

/**
 * Folds AI SDK stream parts into content blocks: text and reasoning by their part id, tool calls when their
 * `tool-call` part arrives whole (their `tool-input-delta`s are reported as deltas only). An `error` part throws a
 * retryable `provider_stream_error`.
 */
export class AiSdkStreamAccumulator {
  readonly #content: ContentBlock[] = []
  readonly #open = new Map<string, TextBlock | ThinkingBlock>()
  readonly #toolInputIndex = new Map<string, number>()
  #finishReason: string | undefined
  #usage: Usage = emptyUsage()
  #modelId: string | undefined

  constructor(private readonly onDelta: (delta: ModelDelta) => void, private readonly label: string) {}

  apply(part: AiSdkStreamPart): void {
    if ('delta' in part && (part.type === 'text-delta' || part.type === 'reasoning-delta')) return this.#appendText(part.type === 'text-delta' ? 'text' : 'thinking', part.id, part.delta)
    if (part.type === 'tool-input-start' && 'id' in part) { this.#toolInputIndex.set(part.id, this.#content.length + this.#toolInputIndex.size); return }
    if (part.type === 'tool-input-delta' && 'delta' in part) { this.onDelta({ kind: 'tool_input', index: this.#toolInputIndex.get(part.id) ?? this.#content.length, delta: part.delta }); return }
    if (part.type === 'tool-call' && 'toolCallId' in part && part.providerExecuted !== true) { this.#content.push({ type: 'tool_use', id: part.toolCallId, name: part.toolName, input: parseInput(part.input, part.toolName) }); return }
    if (part.type === 'response-metadata' && 'modelId' in part && part.modelId) this.#modelId = part.modelId
    if (part.type === 'finish' && 'usage' in part) {
      this.#usage = toAiSdkUsage(part.usage)
      this.#finishReason = typeof part.finishReason === 'string' ? part.finishReason : part.finishReason.unified
    }
    if (part.type === 'error' && 'error' in part) throw new ProviderError(`${this.label} stream failed: ${describe(part.error)}`, { code: 'provider_stream_error', retryable: true, cause: part.error })
  }

  finish(): AccumulatedAiSdk {
    return { content: this.#content.filter(block => block.type !== 'text' || block.text !== ''), finishReason: this.#finishReason, usage: this.#usage, modelId: this.#modelId }
  }

  #appendText(kind: 'text' | 'thinking', id: string, delta: string): void {
    const key = `${kind}:${id}`
    let block = this.#open.get(key)
    if (block === undefined) {
      block = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' }
      this.#open.set(key, block)
      this.#content.push(block)
    }
    if (block.type === 'text') block.text += delta
    else block.thinking += delta
    this.onDelta({ kind, index: this.#content.indexOf(block), delta })
  }
}

function parseInput(input: string, toolName: string): JsonObject {
  if (input.trim() === '') return {}
  try {
    const value: unknown = JSON.parse(input)
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value as JsonObject
  } catch {
    // Reported below.
  }
  throw new ProviderError(`The model's input for ${toolName} is not a JSON object`, { code: 'provider_invalid_response', retryable: true })
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : typeof error === 'string' ? error : JSON.stringify(error)
}

/** The unified finish reason as our stop reason; `interrupted` and `error` never get here (the stream is failed). */
export function toAiSdkStopReason(finishReason: string | undefined, content: readonly ContentBlock[]): StopReason {
  if (finishReason === 'stop') return 'end_turn'
  if (finishReason === 'tool-calls') return 'tool_use'
  if (finishReason === 'length') return 'max_tokens'
  if (finishReason === 'content-filter') return 'refusal'
  return content.some(block => block.type === 'tool_use') ? 'tool_use' : 'end_turn'
}

import type { RawContentBlockDelta, RawContentBlockStartEvent, RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages'
import type { JsonObject } from '../../json'
import { ProviderError } from '../../errors/zidane-error'
import type { ContentBlock } from '../content'
import type { ModelDelta } from '../provider'
import type { StreamUsage } from './from-wire'
import { mergeDeltaUsage } from './from-wire'

type OpenBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; json: string }

interface TrackedBlock { block: OpenBlock; stopped: boolean }

/** What a finished stream assembled, before stop-reason mapping and pricing. */
export interface AccumulatedMessage {
  content: ContentBlock[]
  rawStopReason: string | null
  usage: StreamUsage
  model: string
  truncatedToolUse: boolean
}

function openBlock(start: RawContentBlockStartEvent['content_block']): OpenBlock | undefined {
  switch (start.type) {
    case 'text': return { type: 'text', text: start.text }
    case 'thinking': return { type: 'thinking', thinking: start.thinking, signature: start.signature }
    case 'redacted_thinking': return { type: 'redacted_thinking', data: start.data }
    case 'tool_use': return { type: 'tool_use', id: start.id, name: start.name, json: '' }
    default: return undefined
  }
}

function parseToolInput(json: string): JsonObject | undefined {
  if (json === '') return {}
  try {
    const value: unknown = JSON.parse(json)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value as JsonObject : undefined
  } catch {
    return undefined
  }
}

function invalidToolInput(name: string): ProviderError {
  return new ProviderError(`Anthropic streamed invalid JSON input for tool ${name}`, { code: 'provider_invalid_response', retryable: true })
}

function closeBlock(block: OpenBlock): ContentBlock | undefined {
  switch (block.type) {
    case 'text': return block.text === '' ? undefined : { type: 'text', text: block.text }
    case 'thinking': return block.signature === '' ? { type: 'thinking', thinking: block.thinking } : { type: 'thinking', thinking: block.thinking, signature: block.signature }
    case 'redacted_thinking': return { type: 'redacted_thinking', data: block.data }
    case 'tool_use': {
      const input = parseToolInput(block.json)
      if (input === undefined) throw invalidToolInput(block.name)
      return { type: 'tool_use', id: block.id, name: block.name, input }
    }
  }
}

/**
 * Folds raw stream events into our content blocks, reporting text, thinking and tool-input deltas as they arrive.
 * Unknown events, block types and delta types (citations, server tools) are ignored, as the API asks clients to.
 */
export class StreamAccumulator {
  readonly #blocks = new Map<number, TrackedBlock>()
  #usage: StreamUsage | undefined
  #model = ''
  #stopReason: string | null = null
  #finished = false

  constructor(private readonly onDelta: (delta: ModelDelta) => void) {}

  /** Applies one event. */
  apply(event: RawMessageStreamEvent): void {
    switch (event.type) {
      case 'message_start':
        this.#usage = event.message.usage
        this.#model = event.message.model
        return
      case 'content_block_start': {
        const block = openBlock(event.content_block)
        if (block !== undefined) this.#blocks.set(event.index, { block, stopped: false })
        return
      }
      case 'content_block_delta': return this.#applyDelta(event.index, event.delta)
      case 'content_block_stop': {
        const tracked = this.#blocks.get(event.index)
        if (tracked !== undefined) tracked.stopped = true
        return
      }
      case 'message_delta':
        this.#stopReason = event.delta.stop_reason
        if (this.#usage !== undefined) this.#usage = mergeDeltaUsage(this.#usage, event.usage)
        return
      case 'message_stop':
        this.#finished = true
    }
  }

  #applyDelta(index: number, delta: RawContentBlockDelta): void {
    const block = this.#blocks.get(index)?.block
    if (block === undefined) return
    if (delta.type === 'text_delta' && block.type === 'text') {
      block.text += delta.text
      this.onDelta({ kind: 'text', index, delta: delta.text })
    } else if (delta.type === 'thinking_delta' && block.type === 'thinking') {
      block.thinking += delta.thinking
      this.onDelta({ kind: 'thinking', index, delta: delta.thinking })
    } else if (delta.type === 'signature_delta' && block.type === 'thinking') {
      block.signature = delta.signature
    } else if (delta.type === 'input_json_delta' && block.type === 'tool_use') {
      block.json += delta.partial_json
      if (delta.partial_json !== '') this.onDelta({ kind: 'tool_input', index, delta: delta.partial_json })
    }
  }

  /**
   * The assembled message. Throws a retryable `provider_stream_incomplete` if `message_stop` never came. When the
   * stop reason is `max_tokens` and the last block is a tool_use whose input did not complete (no block stop, or JSON
   * that does not parse), that block is left out and `truncatedToolUse` is set: a half-written call is never returned.
   */
  finish(): AccumulatedMessage {
    if (!this.#finished || this.#usage === undefined) {
      throw new ProviderError('The Anthropic stream ended before message_stop', { code: 'provider_stream_incomplete', retryable: true })
    }
    const ordered = [...this.#blocks.entries()].sort(([left], [right]) => left - right).map(([, tracked]) => tracked)
    const truncatedToolUse = this.#stopReason === 'max_tokens' && isIncompleteToolUse(ordered.at(-1))
    const kept = truncatedToolUse ? ordered.slice(0, -1) : ordered
    const content = kept.map(tracked => closeBlock(tracked.block)).filter((block): block is ContentBlock => block !== undefined)
    return { content, rawStopReason: this.#stopReason, usage: this.#usage, model: this.#model, truncatedToolUse }
  }
}

function isIncompleteToolUse(tracked: TrackedBlock | undefined): boolean {
  if (tracked?.block.type !== 'tool_use') return false
  return !tracked.stopped || tracked.block.json === '' || parseToolInput(tracked.block.json) === undefined
}

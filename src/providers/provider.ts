import type { JsonObject } from '../json'
import type { ContentBlock, Message, Usage } from './content'

/** What a tool looks like to the model. */
export interface ToolSpec { name: string; description: string; inputSchema: JsonObject }

/** Why the model stopped. Every value the Messages API sends is listed; the loop handles each one. */
export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded'

/** Extended-thinking settings, passed through to providers that support them. */
export type ThinkingConfig = { type: 'enabled'; budgetTokens: number } | { type: 'disabled' }

/** One model request, in provider-neutral form. `cache` asks the provider to place cache breakpoints. */
export interface ModelRequest {
  model?: string
  system?: string
  messages: Message[]
  tools: ToolSpec[]
  maxTokens?: number
  cache?: boolean
  thinking?: ThinkingConfig
  signal: AbortSignal
}

/** A piece of the response as it streams in. */
export interface ModelDelta {
  kind: 'text' | 'thinking' | 'tool_input'
  index: number
  delta: string
}

/** The final assistant message with its usage and cost. This is what a model step journals. */
export interface ModelResponse {
  content: ContentBlock[]
  stopReason: StopReason
  usage: Usage
  costUsd: number
  model: string
  requestId?: string
  /** Set when `max_tokens` cut a tool_use block short: the block's input is incomplete. */
  truncatedToolUse?: boolean
}

/**
 * A model provider: turns a request into a stream of deltas and a final message. Providers never see the
 * durable runtime; the loop journals what they return.
 */
export interface Provider {
  readonly name: string
  readonly model: string
  /** Sends `request`, reports deltas through `onDelta`, resolves with the final message or rejects with a `ProviderError`. */
  stream(request: ModelRequest, onDelta: (delta: ModelDelta) => void): Promise<ModelResponse>
}

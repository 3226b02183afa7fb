import type { MessageDeltaUsage, Usage as WireUsage } from '@anthropic-ai/sdk/resources/messages'
import type { ContentBlock, Usage } from '../content'
import type { StopReason } from '../provider'

const knownStopReasons: ReadonlySet<string> = new Set<StopReason>([
  'end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'pause_turn', 'refusal', 'model_context_window_exceeded',
])

function isStopReason(value: string): value is StopReason {
  return knownStopReasons.has(value)
}

/**
 * Our stop reason for the wire one. A missing or unknown value (a newer API) becomes `tool_use` when the message asks
 * for tools and `end_turn` otherwise, so the loop still does the sensible thing; `onWarning` hears about it.
 */
export function toStopReason(raw: string | null, content: readonly ContentBlock[], onWarning: (message: string) => void): StopReason {
  if (raw !== null && isStopReason(raw)) return raw
  const fallback: StopReason = content.some(block => block.type === 'tool_use') ? 'tool_use' : 'end_turn'
  onWarning(`Anthropic sent an unknown stop_reason ${JSON.stringify(raw)}; treating it as ${fallback}`)
  return fallback
}

/** The usage fields the stream accumulates: those of `message_start`, overwritten by non-null `message_delta` values. */
export type StreamUsage = Pick<WireUsage, 'input_tokens' | 'output_tokens' | 'cache_creation_input_tokens' | 'cache_read_input_tokens' | 'cache_creation'>

/** Applies a `message_delta` usage to the snapshot the way the SDK does: output always, the rest only when non-null. */
export function mergeDeltaUsage(snapshot: StreamUsage, delta: MessageDeltaUsage): StreamUsage {
  return {
    ...snapshot,
    output_tokens: delta.output_tokens,
    input_tokens: delta.input_tokens ?? snapshot.input_tokens,
    cache_creation_input_tokens: delta.cache_creation_input_tokens ?? snapshot.cache_creation_input_tokens,
    cache_read_input_tokens: delta.cache_read_input_tokens ?? snapshot.cache_read_input_tokens,
  }
}

/** Our usage for the wire one; the 5m/1h cache-write split is kept only when the API reported it. */
export function toUsage(wire: StreamUsage): Usage {
  const usage: Usage = {
    inputTokens: wire.input_tokens,
    outputTokens: wire.output_tokens,
    cacheReadTokens: wire.cache_read_input_tokens ?? 0,
    cacheWriteTokens: wire.cache_creation_input_tokens ?? 0,
  }
  if (wire.cache_creation != null) {
    usage.cacheWrite5mTokens = wire.cache_creation.ephemeral_5m_input_tokens
    usage.cacheWrite1hTokens = wire.cache_creation.ephemeral_1h_input_tokens
  }
  return usage
}

import type { CacheAccounting } from './prompt-cache'
import { estimateTokens } from './prompt-cache'
import type { Json, ScriptedBlock, ScriptedMessage } from './types'

/** One server-sent event: its `event:` name and the JSON `data` whose `type` equals the name. */
export interface SseEvent { event: string; data: { [key: string]: Json } }

/** The full wire usage object, with every key the 1.14 types list. */
export function wireUsage(message: ScriptedMessage, accounting: CacheAccounting): { [key: string]: Json } {
  const pinned = message.usage ?? {}
  const creation5m = pinned.cache_creation?.ephemeral_5m_input_tokens ?? accounting.cacheCreation5mTokens
  const creation1h = pinned.cache_creation?.ephemeral_1h_input_tokens ?? accounting.cacheCreation1hTokens
  return {
    input_tokens: pinned.input_tokens ?? accounting.inputTokens,
    output_tokens: pinned.output_tokens ?? Math.max(1, estimateTokens(message.content)),
    cache_creation_input_tokens: pinned.cache_creation_input_tokens ?? accounting.cacheCreationTokens,
    cache_read_input_tokens: pinned.cache_read_input_tokens ?? accounting.cacheReadTokens,
    cache_creation: pinned.cache_creation === null ? null : { ephemeral_5m_input_tokens: creation5m, ephemeral_1h_input_tokens: creation1h },
    inference_geo: null,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: 'standard',
    speed: null,
  }
}

/** The stop reason a scripted message ends with. */
export function stopReasonOf(message: ScriptedMessage): string | null {
  if (message.stopReason !== undefined) return message.stopReason
  return message.content.some(block => block.type === 'tool_use') ? 'tool_use' : 'end_turn'
}

function toolUseId(block: ScriptedBlock, index: number): string {
  return block.type === 'tool_use' && block.id !== undefined ? block.id : `toolu_fake_${index}`
}

function finalBlock(block: ScriptedBlock, index: number): { [key: string]: Json } {
  switch (block.type) {
    case 'text': return { type: 'text', text: block.text, citations: null }
    case 'thinking': return { type: 'thinking', thinking: block.thinking, signature: block.signature }
    case 'redacted_thinking': return { type: 'redacted_thinking', data: block.data }
    case 'tool_use': return { type: 'tool_use', id: toolUseId(block, index), name: block.name, input: block.input, caller: { type: 'direct' } }
  }
}

/** The non-streaming JSON body of a scripted message. */
export function messageBody(message: ScriptedMessage, id: string, model: string, usage: { [key: string]: Json }): { [key: string]: Json } {
  return {
    id, type: 'message', role: 'assistant', model: message.model ?? model,
    content: message.content.map(finalBlock),
    stop_reason: stopReasonOf(message), stop_sequence: message.stopSequence ?? null, stop_details: null,
    container: null, diagnostics: null, usage,
  }
}

/** Splits text into word-sized pieces (whitespace kept), so a text streams as several deltas. */
export function wordChunks(text: string): string[] {
  return text.match(/\s*\S+\s*/g) ?? (text === '' ? [] : [text])
}

/** Splits a JSON string into `parts` pieces of similar size, cutting through tokens as the real API does. */
export function jsonChunks(json: string, parts = 3): string[] {
  const size = Math.max(1, Math.ceil(json.length / parts))
  const chunks: string[] = []
  for (let start = 0; start < json.length; start += size) chunks.push(json.slice(start, start + size))
  return chunks
}

function startBlock(block: ScriptedBlock, index: number): { [key: string]: Json } {
  switch (block.type) {
    case 'text': return { type: 'text', text: '', citations: null }
    case 'thinking': return { type: 'thinking', thinking: '', signature: '' }
    case 'redacted_thinking': return { type: 'redacted_thinking', data: block.data }
    case 'tool_use': return { type: 'tool_use', id: toolUseId(block, index), name: block.name, input: {}, caller: { type: 'direct' } }
  }
}

function blockDeltas(block: ScriptedBlock): { [key: string]: Json }[] {
  switch (block.type) {
    case 'text': return wordChunks(block.text).map(text => ({ type: 'text_delta', text }))
    case 'thinking': return [...wordChunks(block.thinking).map(thinking => ({ type: 'thinking_delta', thinking })), { type: 'signature_delta', signature: block.signature }]
    case 'redacted_thinking': return []
    case 'tool_use': return ['', ...jsonChunks(block.partialJson ?? JSON.stringify(block.input))].map(partial_json => ({ type: 'input_json_delta', partial_json }))
  }
}

function blockEvents(block: ScriptedBlock, index: number, withStop: boolean): SseEvent[] {
  const events: SseEvent[] = [{ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: startBlock(block, index) } }]
  for (const delta of blockDeltas(block)) events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta } })
  if (withStop) events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } })
  return events
}

const ping: SseEvent = { event: 'ping', data: { type: 'ping' } }

/** The whole SSE sequence of a scripted message: message_start, pings, blocks, message_delta, message_stop. */
export function messageEvents(message: ScriptedMessage, id: string, model: string, usage: { [key: string]: Json }): SseEvent[] {
  const pings = message.pings ?? true
  const startUsage = { ...usage, output_tokens: 1 }
  const startMessage = { ...messageBody(message, id, model, startUsage), content: [], stop_reason: null, stop_sequence: null }
  const events: SseEvent[] = [{ event: 'message_start', data: { type: 'message_start', message: startMessage } }]
  message.content.forEach((block, index) => {
    if (pings) events.push(ping)
    const isLast = index === message.content.length - 1
    events.push(...blockEvents(block, index, !(isLast && message.omitLastBlockStop === true)))
  })
  const deltaUsage = {
    output_tokens: usage['output_tokens'] ?? 1,
    input_tokens: usage['input_tokens'] ?? null,
    cache_creation_input_tokens: usage['cache_creation_input_tokens'] ?? null,
    cache_read_input_tokens: usage['cache_read_input_tokens'] ?? null,
    output_tokens_details: null,
    server_tool_use: null,
  }
  const delta = { stop_reason: stopReasonOf(message), stop_sequence: message.stopSequence ?? null, stop_details: null, container: null }
  events.push({ event: 'message_delta', data: { type: 'message_delta', delta, usage: deltaUsage } })
  events.push({ event: 'message_stop', data: { type: 'message_stop' } })
  return events
}

/** Serializes one event in SSE framing: `event:` line, one-line `data:`, blank line. */
export function formatEvent(event: SseEvent): string {
  return `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`
}

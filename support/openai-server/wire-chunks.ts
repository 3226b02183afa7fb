import type { JsonObject, ScriptedChat } from './types'

/** Tokens of a text or JSON value, as the server counts them: characters / 4, at least 1. */
export function estimateTokens(value: unknown): number {
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? '')
  return Math.max(1, Math.ceil(text.length / 4))
}

function pieces(text: string, size: number): string[] {
  const out: string[] = []
  for (let start = 0; start < text.length; start += size) out.push(text.slice(start, start + size))
  return out
}

/** The usage of `chat` answering `body`: pinned by the script or estimated from the request and answer. */
export function chatUsage(chat: ScriptedChat, body: JsonObject): JsonObject {
  const answer = (chat.reasoning ?? '') + (chat.text ?? '') + JSON.stringify(chat.toolCalls ?? [])
  const prompt = chat.usage?.prompt_tokens ?? estimateTokens(body['messages']) + (body['tools'] === undefined ? 0 : estimateTokens(body['tools']))
  const completion = chat.usage?.completion_tokens ?? estimateTokens(answer)
  const cached = chat.usage?.cached_tokens ?? 0
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: cached } }
}

/**
 * The chunks of a streamed answer, as OpenAI sends them: a first chunk with the role, reasoning and text in small
 * pieces, each tool call's id and name in its first chunk and its arguments split over many, a chunk with the finish
 * reason, and (unless omitted) a last chunk with `choices: []` and the usage.
 */
export function chatChunks(chat: ScriptedChat, id: string, model: string, usage: JsonObject): JsonObject[] {
  const base = { id, object: 'chat.completion.chunk', created: 1_700_000_000, model, system_fingerprint: 'fp_fake' }
  const chunk = (delta: JsonObject, finish: string | null = null): JsonObject => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })
  const chunks: JsonObject[] = [chunk({ role: 'assistant', content: '' })]
  for (const piece of pieces(chat.reasoning ?? '', chat.textChunkChars ?? 8)) chunks.push(chunk({ reasoning_content: piece }))
  for (const piece of pieces(chat.text ?? '', chat.textChunkChars ?? 8)) chunks.push(chunk({ content: piece }))
  ;(chat.toolCalls ?? []).forEach((call, index) => {
    const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments)
    chunks.push(chunk({ tool_calls: [{ index, id: call.id ?? `call_${id.slice(-6)}_${index}`, type: 'function', function: { name: call.name, arguments: '' } }] }))
    for (const piece of pieces(args, chat.argumentChunkChars ?? 7)) chunks.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }))
  })
  const finish = chat.finishReason === undefined ? ((chat.toolCalls ?? []).length > 0 ? 'tool_calls' : 'stop') : chat.finishReason
  if (finish !== null) chunks.push(chunk({}, finish))
  if (chat.omitUsage !== true) chunks.push({ ...base, choices: [], usage })
  return chunks
}

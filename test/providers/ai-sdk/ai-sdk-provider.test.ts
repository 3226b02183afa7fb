import { describe, expect, it } from 'vitest'
import { aiSdkModel } from '../../../src/providers'
import type { AiSdkLanguageModel, Message } from '../../../src/providers'

type Part = Record<string, unknown> & { type: string }

/** A hand-driven V3 model: records its call options and streams `parts`. */
function scriptedV3(parts: Part[], seen: unknown[]): AiSdkLanguageModel {
  return {
    specificationVersion: 'v3', provider: 'scripted.chat', modelId: 'm1',
    doStream: (options) => {
      seen.push(options)
      return Promise.resolve({ stream: new ReadableStream({ start(controller) { for (const part of parts) controller.enqueue(part); controller.close() } }) })
    },
  }
}

const usage = { inputTokens: { total: 120, noCache: 100, cacheRead: 20, cacheWrite: undefined }, outputTokens: { total: 7 } }
const history: Message[] = [
  { role: 'user', content: [{ type: 'text', text: 'look' }] },
  { role: 'assistant', content: [{ type: 'thinking', thinking: 'signed', signature: 's' }, { type: 'thinking', thinking: 'mine' }, { type: 'tool_use', id: 't1', name: 'shot', input: {} }] },
  { role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content: [{ type: 'image', mediaType: 'image/png', data: 'AAAA' }] }] },
]

describe('AI SDK adapter', () => {
  it('builds a V3 prompt (tool role, base64 file data, unsigned reasoning only) and folds text, reasoning, calls, usage and cost', async () => {
    const seen: unknown[] = []
    const model = scriptedV3([
      { type: 'stream-start', warnings: [] },
      { type: 'reasoning-start', id: 'r' }, { type: 'reasoning-delta', id: 'r', delta: 'hm' }, { type: 'reasoning-end', id: 'r' },
      { type: 'text-start', id: 'x' }, { type: 'text-delta', id: 'x', delta: 'ok ' }, { type: 'text-delta', id: 'x', delta: 'then' }, { type: 'text-end', id: 'x' },
      { type: 'tool-input-start', id: 'c', toolName: 'shot' }, { type: 'tool-input-delta', id: 'c', delta: '{"a":' }, { type: 'tool-input-delta', id: 'c', delta: '1}' },
      { type: 'tool-call', toolCallId: 'c', toolName: 'shot', input: '{"a":1}' },
      { type: 'finish', usage, finishReason: { unified: 'tool-calls', raw: 'tool_calls' } },
    ], seen)
    const deltas: string[] = []
    const response = await aiSdkModel(model, { prices: { m1: { inputPerMTok: 1, outputPerMTok: 10, cachedInputPerMTok: 0.5 } } }).stream({ system: 'sys', messages: history, tools: [], signal: new AbortController().signal }, delta => deltas.push(`${delta.kind}:${delta.delta}`))
    expect(response.content).toEqual([{ type: 'thinking', thinking: 'hm' }, { type: 'text', text: 'ok then' }, { type: 'tool_use', id: 'c', name: 'shot', input: { a: 1 } }])
    expect(response).toMatchObject({ stopReason: 'tool_use', usage: { inputTokens: 100, cacheReadTokens: 20, outputTokens: 7 }, model: 'm1' })
    expect(response.costUsd).toBeCloseTo((100 + 20 * 0.5 + 70) / 1e6, 12)
    expect(deltas).toEqual(['thinking:hm', 'text:ok ', 'text:then', 'tool_input:{"a":', 'tool_input:1}'])
    expect((seen[0] as { prompt: unknown }).prompt).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: [{ type: 'text', text: 'look' }] },
      { role: 'assistant', content: [{ type: 'reasoning', text: 'mine' }, { type: 'tool-call', toolCallId: 't1', toolName: 'shot', input: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 't1', toolName: 'shot', output: { type: 'content', value: [{ type: 'file', mediaType: 'image/png', data: 'AAAA' }] } }] },
    ])
  })

  it('fails retryably on an error part or a stream without a finish, and maps an APICallError by status', async () => {
    const request = { messages: history.slice(0, 1), tools: [], signal: new AbortController().signal }
    await expect(aiSdkModel(scriptedV3([{ type: 'error', error: new Error('boom') }], [])).stream(request, () => {})).rejects.toMatchObject({ code: 'provider_stream_error', retryable: true })
    await expect(aiSdkModel(scriptedV3([{ type: 'text-delta', id: 'x', delta: 'cut' }], [])).stream(request, () => {})).rejects.toMatchObject({ code: 'provider_stream_incomplete', retryable: true })
    const failing: AiSdkLanguageModel = { specificationVersion: 'v4', provider: 'p', modelId: 'm', doStream: () => Promise.reject(Object.assign(new Error('bad key'), { statusCode: 401, isRetryable: false })) }
    await expect(aiSdkModel(failing).stream(request, () => {})).rejects.toMatchObject({ code: 'provider_unauthorized', retryable: false, status: 401 })
  })
})

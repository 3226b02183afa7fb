import { describe, expect, it } from 'vitest'
import { validateChatRequest } from '../../../support/openai-server'
import type { JsonObject } from '../../../support/openai-server'

const call = (id: string): JsonObject => ({ id, type: 'function', function: { name: 'read', arguments: '{}' } })

describe('fake Chat Completions server: request validation', () => {
  it('accepts a well-formed conversation with tool calls answered in order', () => {
    expect(validateChatRequest({ model: 'm', stream: true, stream_options: { include_usage: true }, messages: [
      { role: 'system', content: 's' }, { role: 'user', content: 'u' },
      { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
      { role: 'tool', tool_call_id: 'a', content: '1' }, { role: 'tool', tool_call_id: 'b', content: '2' },
      { role: 'assistant', content: 'done' },
    ] })).toEqual([])
  })

  it('finds unanswered calls, foreign tool ids, Anthropic blocks and fields', () => {
    const problems = validateChatRequest({ model: 'm', messages: [
      { role: 'user', content: 'u' },
      { role: 'assistant', content: null, tool_calls: [call('a'), call('b')] },
      { role: 'tool', tool_call_id: 'z', content: '1' },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'a' }] },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 't' }], signature: 's' },
    ] })
    expect(problems.join('\n')).toMatch(/tool_call_id "z" answers no open tool call/)
    expect(problems.join('\n')).toMatch(/tool calls a, b of the preceding assistant message have no tool message/)
    expect(problems.join('\n')).toMatch(/invalid type "tool_result"/)
    expect(problems.join('\n')).toMatch(/unrecognized fields signature/)
    expect(problems.join('\n')).toMatch(/invalid type "thinking"/)
  })
})

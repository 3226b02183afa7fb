import { describe, expect, it } from 'vitest'
import type { StopReason } from '../../../src/providers'
import { streamAll, useFakeServer, userRequest } from './fixture'

const allStopReasons: StopReason[] = ['end_turn', 'tool_use', 'max_tokens', 'stop_sequence', 'pause_turn', 'refusal', 'model_context_window_exceeded']

describe('anthropic provider: stop reasons and truncation', () => {
  const fixture = useFakeServer()

  it.each(allStopReasons)('maps stop_reason %s unchanged', async stopReason => {
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'x' }], stopReason })
    const { response } = await streamAll(fixture.provider(), userRequest('hi'))
    expect(response.stopReason).toBe(stopReason)
  })

  it('maps an unknown stop reason to end_turn and warns', async () => {
    const warnings: string[] = []
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'text', text: 'x' }], stopReason: 'brand_new_reason' })
    const { response } = await streamAll(fixture.provider({ onWarning: message => warnings.push(message) }), userRequest('hi'))
    expect(response.stopReason).toBe('end_turn')
    expect(warnings).toEqual([expect.stringContaining('brand_new_reason')])
  })

  it('maps an unknown stop reason to tool_use when the message calls a tool', async () => {
    const warnings: string[] = []
    fixture.server.enqueue({ kind: 'message', content: [{ type: 'tool_use', name: 'read', input: { path: 'a' } }], stopReason: null })
    const { response } = await streamAll(fixture.provider({ onWarning: message => warnings.push(message) }), userRequest('hi'))
    expect(response.stopReason).toBe('tool_use')
    expect(warnings).toHaveLength(1)
  })

  it('leaves out a tool_use cut short by max_tokens and flags truncatedToolUse', async () => {
    fixture.server.enqueue({ kind: 'message', stopReason: 'max_tokens', content: [
      { type: 'text', text: 'Writing the file now.' },
      { type: 'tool_use', id: 'toolu_cut', name: 'write_file', input: {}, partialJson: '{"path": "/tmp/a.txt", "content": "hello wor' },
    ] })
    const { response, deltas } = await streamAll(fixture.provider(), userRequest('write'))
    expect(response.stopReason).toBe('max_tokens')
    expect(response.truncatedToolUse).toBe(true)
    expect(response.content).toEqual([{ type: 'text', text: 'Writing the file now.' }])
    expect(deltas.some(delta => delta.kind === 'tool_input')).toBe(true)
  })

  it('also flags a tool_use whose block never stopped', async () => {
    fixture.server.enqueue({ kind: 'message', stopReason: 'max_tokens', omitLastBlockStop: true, content: [
      { type: 'tool_use', id: 'toolu_open', name: 'read', input: { path: 'a' } },
    ] })
    const { response } = await streamAll(fixture.provider(), userRequest('read'))
    expect(response).toMatchObject({ stopReason: 'max_tokens', truncatedToolUse: true, content: [] })
  })

  it('keeps a complete tool_use before the truncated one', async () => {
    fixture.server.enqueue({ kind: 'message', stopReason: 'max_tokens', content: [
      { type: 'tool_use', id: 'toolu_ok', name: 'read', input: { path: 'a' } },
      { type: 'tool_use', id: 'toolu_cut', name: 'read', input: {}, partialJson: '{"pa' },
    ] })
    const { response } = await streamAll(fixture.provider(), userRequest('read'))
    expect(response.content).toEqual([{ type: 'tool_use', id: 'toolu_ok', name: 'read', input: { path: 'a' } }])
    expect(response.truncatedToolUse).toBe(true)
  })

  it('does not flag max_tokens in plain text', async () => {
    fixture.server.enqueue({ kind: 'message', stopReason: 'max_tokens', content: [{ type: 'text', text: 'and then' }] })
    const { response } = await streamAll(fixture.provider(), userRequest('hi'))
    expect(response.truncatedToolUse).toBeUndefined()
  })

  it('rejects invalid tool JSON outside max_tokens as a retryable invalid response', async () => {
    fixture.server.enqueue({ kind: 'message', stopReason: 'tool_use', content: [{ type: 'tool_use', name: 'read', input: {}, partialJson: '{"path": ' }] })
    await expect(fixture.provider().stream(userRequest('hi'), () => {})).rejects.toMatchObject({ code: 'provider_invalid_response', retryable: true })
  })
})

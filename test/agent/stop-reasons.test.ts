import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import { scriptedProvider } from 'zidane/testing'
import { countingTool } from '../helpers/tools'

describe('how the loop handles every stop reason', () => {
  it.each([
    ['end_turn', 'completed', undefined],
    ['stop_sequence', 'completed', undefined],
    ['max_tokens', 'completed', 'max_tokens'],
    ['refusal', 'completed', 'refusal'],
    ['model_context_window_exceeded', 'limit', 'model_context_window_exceeded'],
  ] as const)('%s ends the run with status %s', async (stopReason, status, reason) => {
    const stats = await createAgent({ provider: scriptedProvider([{ text: 'x', stopReason }]) }).run({ prompt: 'go' })
    expect(stats.status).toBe(status)
    if (reason) expect(stats.reason).toContain(reason)
    else expect(stats.reason).toBeUndefined()
  })

  it('pause_turn sends the conversation back so the model can continue', async () => {
    const provider = scriptedProvider([{ text: 'part one', stopReason: 'pause_turn' }, { text: 'part two' }])
    const stats = await createAgent({ provider }).run({ prompt: 'go' })
    expect(stats.text).toBe('part two')
    expect(provider.requests[1]?.messages.at(-1)?.role).toBe('assistant')
  })

  it('a tool call cut by max_tokens is reported to the model instead of run', async () => {
    const ledger: string[] = []
    const provider = scriptedProvider([{ toolCalls: [{ name: 'work', input: {} }], stopReason: 'max_tokens' }, { text: 'retrying shorter' }])
    const scripted = { ...provider, stream: async (...args: Parameters<typeof provider.stream>) => ({ ...(await provider.stream(...args)), truncatedToolUse: true }) }
    await createAgent({ provider: scripted, tools: [countingTool('work', ledger)] }).run({ prompt: 'go' })
    expect(ledger).toEqual([])
    expect(provider.requests[1]?.messages.at(-1)?.content[0]).toMatchObject({ type: 'tool_result', isError: true, content: expect.stringContaining('cut off by max_tokens') })
  })
})

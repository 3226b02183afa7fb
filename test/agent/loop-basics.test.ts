import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { scriptedProvider } from 'zidane/testing'

const echo: ToolDef = {
  spec: { name: 'echo', description: 'Echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
  execute: async input => `echo:${String(input.text)}`,
}

describe('the agent loop', () => {
  it('runs model step, tool call, then ends the turn', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'echo', input: { text: 'hi' } }] }, { text: 'finished' }])
    const agent = createAgent({ provider, tools: [echo] })
    const stats = await agent.run({ prompt: 'go' })
    expect(stats.status).toBe('completed')
    expect(stats.turns).toBe(2)
    expect(stats.toolCalls).toBe(1)
    expect(stats.text).toBe('finished')
    const second = provider.requests[1]
    expect(second?.messages.at(-1)?.content[0]).toMatchObject({ type: 'tool_result', content: 'echo:hi' })
    const session = await agent.session()
    expect(session.turns.map(turn => turn.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
  })
})

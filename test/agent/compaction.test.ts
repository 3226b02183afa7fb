import { describe, expect, it } from 'vitest'
import { compactTail, createAgent } from 'zidane'
import type { ContentBlock } from 'zidane/providers'
import { scriptedProvider } from 'zidane/testing'
import { countingTool } from '../helpers/tools'

describe("compactStrategy 'tail'", () => {
  it('drops the oldest turns but never splits a tool_use from its tool_result', () => {
    const big = 'x'.repeat(400)
    const messages = [
      { role: 'user' as const, content: [{ type: 'text' as const, text: big }] },
      { role: 'assistant' as const, content: [{ type: 'tool_use' as const, id: 'a', name: 't', input: {} }] },
      { role: 'user' as const, content: [{ type: 'tool_result' as const, toolUseId: 'a', content: big }] },
      { role: 'assistant' as const, content: [{ type: 'text' as const, text: big }] },
      { role: 'user' as const, content: [{ type: 'text' as const, text: 'latest' }] },
    ]
    const { messages: kept, dropped } = compactTail(messages, 60)
    expect(dropped).toBe(4)
    expect(kept[0]?.content[0]).toEqual({ type: 'text', text: 'latest' })
    const ids = new Set(kept.flatMap(message => message.content.filter((block): block is Extract<ContentBlock, { type: 'tool_use' }> => block.type === 'tool_use').map(block => block.id)))
    for (const message of kept) for (const block of message.content) if (block.type === 'tool_result') expect(ids.has(block.toolUseId)).toBe(true)
  })

  it('sends a compacted history while the session keeps every turn', async () => {
    const provider = scriptedProvider((_request, index) => (index < 4 ? { toolCalls: [{ name: 'work', input: { pad: 'y'.repeat(2_000) } }] } : { text: 'done' }))
    const agent = createAgent({ provider, tools: [countingTool('work', [])], behavior: { compactStrategy: 'tail', compactBudgetTokens: 1_500 } })
    const compactions: number[] = []
    agent.hooks.hook('compact', event => { compactions.push(event.droppedTurns) })
    await agent.run({ prompt: 'first' })
    await agent.run({ prompt: 'second' })
    expect(compactions.length).toBeGreaterThan(0)
    const last = provider.requests.at(-1)
    expect(last?.messages[0]?.role).toBe('user')
    expect(last?.messages[0]?.content.some(block => block.type === 'tool_result')).toBe(false)
    expect((await agent.session()).turns.length).toBeGreaterThan(last?.messages.length ?? 0)
  })
})

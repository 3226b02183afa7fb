import fc from 'fast-check'
import { describe, expect, it, vi } from 'vitest'
import { compactTail, createAgent, estimateTokens } from 'zidane'
import type { ContentBlock, Message } from 'zidane/providers'
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

/** The strategy as first written: the whole list serialized for every estimate. What the faster one must match. */
function referenceCompactTail(messages: readonly Message[], budgetTokens: number): { messages: Message[]; dropped: number } {
  const estimate = (list: readonly Message[]): number => Math.ceil(JSON.stringify(list).length / 4)
  if (estimate(messages) <= budgetTokens) return { messages: [...messages], dropped: 0 }
  const cuts = messages.flatMap((message, index) => (index > 0 && message.role === 'user' && !message.content.some(block => block.type === 'tool_result') ? [index] : []))
  for (const cut of cuts) if (estimate(messages.slice(cut)) <= budgetTokens) return { messages: messages.slice(cut), dropped: cut }
  const last = cuts.at(-1) ?? 0
  return { messages: messages.slice(last), dropped: last }
}

const messageArbitrary: fc.Arbitrary<Message> = fc.oneof(
  fc.record({ role: fc.constant('user' as const), content: fc.array(fc.string({ maxLength: 80 }).map(text => ({ type: 'text' as const, text })), { minLength: 1, maxLength: 3 }) }),
  fc.record({ role: fc.constant('user' as const), content: fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 120 })).map(([id, text]) => [{ type: 'tool_result' as const, toolUseId: id, content: text }]) }),
  fc.record({ role: fc.constant('assistant' as const), content: fc.tuple(fc.string({ maxLength: 60 }), fc.string({ maxLength: 8 })).map(([text, id]) => [{ type: 'text' as const, text }, { type: 'tool_use' as const, id, name: 'work', input: { text } }]) }),
)

describe('the history estimate', () => {
  it('is the JSON length of the whole list, and compactTail cuts where the whole-list estimate cut', () => {
    fc.assert(fc.property(fc.array(messageArbitrary, { maxLength: 30 }), fc.integer({ min: 0, max: 800 }), (messages, budget) => {
      expect(estimateTokens(messages)).toBe(Math.ceil(JSON.stringify(messages).length / 4))
      expect(compactTail(messages, budget)).toEqual(referenceCompactTail(messages, budget))
    }))
  })

  it('serializes a message once while its content stays the same, and again once the content is replaced', () => {
    const messages: Message[] = [{ role: 'user', content: [{ type: 'text', text: 'first' }] }, { role: 'assistant', content: [{ type: 'text', text: 'second' }] }]
    estimateTokens(messages)
    const stringify = vi.spyOn(JSON, 'stringify')
    try {
      expect(estimateTokens(messages)).toBe(Math.ceil(JSON.stringify(messages).length / 4))
      expect(stringify).toHaveBeenCalledTimes(1) // the expectation's own call: the estimate serialized nothing
      const last = messages[1] as Message
      last.content = [...last.content, { type: 'text', text: ' and more' }]
      expect(estimateTokens(messages)).toBe(Math.ceil(JSON.stringify(messages).length / 4))
    } finally {
      stringify.mockRestore()
    }
  })
})

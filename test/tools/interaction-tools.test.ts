import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import { createInteractionTools } from 'zidane/tools'
import { createMemoryJournal, createMemoryJournalRuntime, scriptedProvider } from 'zidane/testing'

describe('ask_user and present_plan', () => {
  it('parks ask_user on an awakeable and hands the answer to the model', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'ask_user', input: { question: 'Which colour?' } }] }, { text: 'noted' }])
    const questions: string[] = []
    const agent = createAgent({
      provider,
      tools: createInteractionTools({ requestInteraction: request => { questions.push(request.question); setTimeout(() => { void agent.runtime.resolveAwakeable(request.awakeable.id, 'blue') }, 10) } }),
    })
    await agent.run({ prompt: 'ask me' })
    expect(questions).toEqual(['Which colour?'])
    expect(provider.requests[1]?.messages.at(-1)?.content[0]).toMatchObject({ type: 'tool_result', content: 'blue' })
  })

  it('keeps an answer given while no process runs and does not ask again', async () => {
    const journal = createMemoryJournal()
    const provider = scriptedProvider([{ toolCalls: [{ name: 'present_plan', input: { plan: 'Step 1' } }] }, { text: 'approved plan done' }])
    const asked: string[] = []
    const tools = createInteractionTools({ requestInteraction: request => { asked.push(request.awakeable.id) } })
    const firstRuntime = createMemoryJournalRuntime({ journal })
    const first = createAgent({ provider, tools, durable: firstRuntime, sessionId: 'plan' })
    void first.run({ prompt: 'plan it' }).catch(() => undefined)
    await new Promise(resolve => setTimeout(resolve, 30))
    firstRuntime.crash()
    expect(asked).toHaveLength(1)
    await createMemoryJournalRuntime({ journal }).resolveAwakeable(asked[0] ?? '', 'looks good')
    const second = createAgent({ provider, tools, durable: { runtime: createMemoryJournalRuntime({ journal }), onInterrupted: 'resume' }, sessionId: 'plan' })
    const stats = await second.resume()
    expect(stats?.text).toBe('approved plan done')
    expect(asked).toHaveLength(1)
    expect(provider.requests[1]?.messages.at(-1)?.content[0]).toMatchObject({ content: 'looks good' })
  })

  it('times out when a deadline is set and nobody answers', async () => {
    const provider = scriptedProvider([{ toolCalls: [{ name: 'ask_user', input: { question: 'Anyone?' } }] }, { text: 'gave up' }])
    const agent = createAgent({ provider, tools: createInteractionTools({ requestInteraction: () => undefined, timeoutMs: 20 }) })
    await agent.run({ prompt: 'x' })
    expect(provider.requests[1]?.messages.at(-1)?.content[0]).toMatchObject({ isError: true, content: 'No answer arrived before the deadline.' })
  })
})

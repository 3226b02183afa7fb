import type { LanguageModelV4CallOptions } from '@ai-sdk/provider'
import { describe, expect, it } from 'vitest'
import { scriptedLanguageModel } from '../../bench/lib/scripted-language-model'

const callAfter = (assistantTurns: number): LanguageModelV4CallOptions => ({
  prompt: [{ role: 'user', content: [{ type: 'text', text: 'benchmark run' }] }, ...Array.from({ length: assistantTurns }, () => ({ role: 'assistant' as const, content: [{ type: 'text' as const, text: 'step' }] }))],
})

describe('scripted AI SDK model of the bench', () => {
  it('answers each tool turn with the echo call of that turn, read from the prompt', async () => {
    const result = await scriptedLanguageModel({ toolTurns: 2, modelDelayMs: 0 }).doGenerate(callAfter(1))
    expect(result.content).toEqual([{ type: 'text', text: 'step 1' }, { type: 'tool-call', toolCallId: 'call_1', toolName: 'echo', input: '{"turn":1}' }])
    expect(result.finishReason.unified).toBe('tool-calls')
  })

  it('answers with the final text once the tool turns are done', async () => {
    const result = await scriptedLanguageModel({ toolTurns: 2, modelDelayMs: 0 }).doGenerate(callAfter(2))
    expect(result.content).toEqual([{ type: 'text', text: 'done' }])
    expect(result.finishReason.unified).toBe('stop')
  })
})

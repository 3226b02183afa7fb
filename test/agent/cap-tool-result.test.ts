import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { createDefaultRuntime } from 'zidane/durable'
import { scriptedProvider } from 'zidane/testing'
import { capText } from '../../src/agent/cap-tool-result'

describe('tool results over the runtime journal limit', () => {
  it('keeps the head and the tail with a note', () => {
    const text = `${'a'.repeat(10_000)}MIDDLE${'z'.repeat(10_000)}`
    const capped = capText(text, 4_096)
    expect(Buffer.byteLength(capped)).toBeLessThanOrEqual(4_096 + 300)
    expect(capped.startsWith('aaa')).toBe(true)
    expect(capped.endsWith('zzz')).toBe(true)
    expect(capped).toContain('were left out')
    expect(capText('short', 4_096)).toBe('short')
  })

  it('caps what a tool returns before the step records it, on runtimes that declare a limit', async () => {
    const huge: ToolDef = { spec: { name: 'dump', description: 'Dump', inputSchema: { type: 'object' } }, execute: async () => 'x'.repeat(100_000) }
    const runtime = { ...createDefaultRuntime(), defaults: { maxToolResultBytes: 8_192 } }
    const provider = scriptedProvider([{ toolCalls: [{ name: 'dump', input: {} }] }, { text: 'ok' }])
    await createAgent({ provider, tools: [huge], durable: runtime }).run({ prompt: 'go' })
    const result = provider.requests[1]?.messages.at(-1)?.content[0]
    expect(result?.type === 'tool_result' && typeof result.content === 'string' ? Buffer.byteLength(result.content) : 0).toBeLessThan(8_600)
  })
})

import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { DEFAULT_MAX_TOOL_RESULT_BYTES, restateRuntime } from 'zidane/restate'
import { scriptedProvider } from 'zidane/testing'
import { createFakeObjectContext } from '../helpers/restate/fake-context'

describe('tool results on the Restate runtime', () => {
  it('are cut to 1 MiB before they are journaled, so a huge output cannot poison the invocation', async () => {
    const ctx = createFakeObjectContext('big-output')
    const runtime = restateRuntime(ctx, { idSeed: 'big-output' })
    expect(runtime.defaults.maxToolResultBytes).toBe(DEFAULT_MAX_TOOL_RESULT_BYTES)
    const dump: ToolDef = { spec: { name: 'dump', description: 'Dump', inputSchema: { type: 'object' } }, execute: async () => 'y'.repeat(5 * 1024 * 1024) }
    const provider = scriptedProvider([{ toolCalls: [{ name: 'dump', input: {} }] }, { text: 'ok' }])
    await createAgent({ provider, tools: [dump], durable: runtime }).run({ prompt: 'dump it' })
    const result = provider.requests[1]?.messages.at(-1)?.content[0]
    const size = result?.type === 'tool_result' && typeof result.content === 'string' ? Buffer.byteLength(result.content) : -1
    expect(size).toBeGreaterThan(DEFAULT_MAX_TOOL_RESULT_BYTES - 1024)
    expect(size).toBeLessThanOrEqual(DEFAULT_MAX_TOOL_RESULT_BYTES + 512)
  })
})

import { describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import type { ToolDef } from 'zidane'
import { createSession, loadSession } from 'zidane/session'
import { scriptedProvider } from 'zidane/testing'
import { useTempFiles } from './sqlite-test-helpers'

const echo: ToolDef = { spec: { name: 'echo', description: 'Echo', inputSchema: { type: 'object' } }, execute: async () => 'echoed' }

describe('SQLite runtime: the model\'s turn written with its step', () => {
  const files = useTempFiles()

  it('writes no turn into the file for a session that lives in memory only', async () => {
    const runtime = files.open()
    // A session with no store: its turns are the caller's, never the runtime's file's.
    const session = await createSession({ id: 'in-memory' })
    const provider = scriptedProvider([{ toolCalls: [{ name: 'echo', id: 'call_1', input: {} }] }, { text: 'done' }])
    const stats = await createAgent({ provider, tools: [echo], durable: runtime, session }).run({ prompt: 'go' })
    expect(stats.status).toBe('completed')
    expect(session.turns.map(turn => turn.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
    // A session of that id created in the file later starts empty: no assistant turn of the memory session is in it.
    await createSession({ id: 'in-memory', store: runtime.stores.session })
    const stored = await loadSession(runtime.stores.session, 'in-memory')
    expect(stored?.turns.map(turn => turn.id)).toEqual([])
  })
})

import { describe, expect, it } from 'vitest'
import { createMemorySessionStore, createSession, findOpenToolCalls, HEAL_TEXT, loadSession } from 'zidane/session'

describe('session.healInterruptedToolCalls', () => {
  it('closes every tool_use without a tool_result so the history is valid again', async () => {
    const store = createMemorySessionStore()
    const session = await createSession({ id: 'heal-me', store })
    await session.appendTurns([
      { id: 'u', runId: 'r1', role: 'user', content: [{ type: 'text', text: 'go' }], createdAt: 1 },
      { id: 'a', runId: 'r1', role: 'assistant', content: [
        { type: 'tool_use', id: 'c1', name: 'shell', input: {} },
        { type: 'tool_use', id: 'c2', name: 'shell', input: {} },
      ], createdAt: 2 },
      { id: 'r', runId: 'r1', role: 'user', content: [{ type: 'tool_result', toolUseId: 'c1', content: 'ok' }], createdAt: 3 },
    ])
    expect(await session.healInterruptedToolCalls()).toBe(1)
    const reloaded = await loadSession(store, 'heal-me')
    expect(findOpenToolCalls(reloaded?.turns ?? [])).toEqual([])
    expect(reloaded?.turns.at(-1)?.content).toEqual([{ type: 'tool_result', toolUseId: 'c2', content: HEAL_TEXT, isError: true }])
    expect(await session.healInterruptedToolCalls()).toBe(0)
  })

  it('refuses a session written by a newer schema', async () => {
    const store = createMemorySessionStore()
    await store.save({ schemaVersion: 99, id: 'future', status: 'idle', turns: [], runs: [], createdAt: 1, updatedAt: 1, metadata: {} })
    await expect(loadSession(store, 'future')).rejects.toMatchObject({ code: 'session_schema_newer' })
  })

  it('appends a turn only once', async () => {
    const session = await createSession({ store: createMemorySessionStore() })
    const turn = { id: 'same', runId: 'r', role: 'user' as const, content: [{ type: 'text' as const, text: 'x' }], createdAt: 1 }
    await session.appendTurns([turn])
    await session.appendTurns([turn])
    expect(session.turns).toHaveLength(1)
  })
})

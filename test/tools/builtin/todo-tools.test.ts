import { describe, expect, it } from 'vitest'
import { createMemoryToolStateStore } from '../../../src/durable/memory-tool-state-store'
import { todoReadTool } from '../../../src/tools/builtin/todo-read-tool'
import { todoWriteTool } from '../../../src/tools/builtin/todo-write-tool'
import { createToolContext, runTool, textOf } from './tool-context'

const todos = [
  { content: 'Read the code', status: 'completed' },
  { content: 'Write the fix', status: 'in_progress' },
  { content: 'Run the tests', status: 'pending' },
]
const expected = '1. [completed] Read the code\n2. [in_progress] Write the fix\n3. [pending] Run the tests'

describe('todowrite and todoread', () => {
  it('reads back what was written, stored in ctx.toolState under "todos"', async () => {
    const toolState = createMemoryToolStateStore()
    const context = createToolContext({ toolState })
    expect(textOf((await runTool(todoWriteTool(), { todos }, context)).content)).toBe(`Todo list updated:\n${expected}`)
    expect(textOf((await runTool(todoReadTool(), {}, context)).content)).toBe(expected)
    expect(await toolState.get('todos')).toEqual({ todos })
  })

  it('reports an empty list before anything is written', async () => {
    expect(textOf((await runTool(todoReadTool(), {})).content)).toBe('The todo list is empty.')
  })

  it('falls back to a shared in-memory store when the context has no toolState', async () => {
    const fallback = createMemoryToolStateStore()
    const { toolState: _unused, ...rest } = createToolContext()
    await runTool(todoWriteTool(fallback), { todos }, rest)
    expect(textOf((await runTool(todoReadTool(fallback), {}, rest)).content)).toBe(expected)
  })

  it('rejects malformed todos', async () => {
    await expect(runTool(todoWriteTool(), { todos: [{ content: 'x', status: 'done' }] })).rejects.toMatchObject({ code: 'invalid_input' })
    await expect(runTool(todoWriteTool(), { todos: [{ content: '', status: 'pending' }] })).rejects.toMatchObject({ code: 'invalid_input' })
  })
})

import { createMemoryToolStateStore } from '../../durable/memory-tool-state-store'
import type { ToolStateStore } from '../../session/types'
import type { ToolDef } from '../tool'
import { formatTodos, parseTodos, saveTodos } from './todo-list'

/**
 * The `todowrite` tool: replaces the session's todo list in `ctx.toolState` (key `todos`), or in `fallback` when the
 * run has no tool-state store.
 */
export function todoWriteTool(fallback: ToolStateStore = createMemoryToolStateStore()): ToolDef {
  return {
    spec: {
      name: 'todowrite',
      description: 'Replace your todo list for this session with the given items. Send the whole list each time; keep at most one item in_progress.',
      inputSchema: {
        type: 'object',
        properties: {
          todos: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                content: { type: 'string', minLength: 1, description: 'What to do.' },
                status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] },
              },
              required: ['content', 'status'],
              additionalProperties: false,
            },
          },
        },
        required: ['todos'],
        additionalProperties: false,
      },
    },
    isConcurrencySafe: false,
    execute: async (input, ctx) => {
      const todos = parseTodos(input.todos)
      await saveTodos(ctx.toolState ?? fallback, todos)
      return `Todo list updated:\n${formatTodos(todos)}`
    },
  }
}

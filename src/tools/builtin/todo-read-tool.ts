import { createMemoryToolStateStore } from '../../durable/memory-tool-state-store'
import type { ToolStateStore } from '../../session/types'
import type { ToolDef } from '../tool'
import { formatTodos, loadTodos } from './todo-list'

/**
 * The `todoread` tool: returns the session's todo list from `ctx.toolState`, or from `fallback` when the run has no
 * tool-state store. Pass the same `fallback` to `todoWriteTool` so both see one list.
 */
export function todoReadTool(fallback: ToolStateStore = createMemoryToolStateStore()): ToolDef {
  return {
    spec: {
      name: 'todoread',
      description: 'Read your current todo list for this session.',
      inputSchema: { type: 'object', properties: {}, required: [], additionalProperties: false },
    },
    replay: 'safe',
    isConcurrencySafe: true,
    execute: async (_input, ctx) => formatTodos(await loadTodos(ctx.toolState ?? fallback)),
  }
}

import type { JsonObject, JsonValue } from '../../json'
import type { ToolStateStore } from '../../session/types'
import { ToolError } from '../tool'

/** Where a todo stands. */
export type TodoStatus = 'pending' | 'in_progress' | 'completed'

/** One entry of the agent's todo list. */
export interface TodoItem {
  content: string
  status: TodoStatus
}

/** The tool-state key the todo list is stored under (durable: never rename). */
export const TODO_STATE_KEY = 'todos'

const STATUSES: readonly TodoStatus[] = ['pending', 'in_progress', 'completed']

/** Validates a todo list from tool input; throws `ToolError` `invalid_input` on a malformed entry. */
export function parseTodos(value: JsonValue | undefined): TodoItem[] {
  if (!Array.isArray(value)) throw new ToolError('Invalid input: "todos" must be an array.', 'invalid_input')
  return value.map((item, index) => {
    const entry = typeof item === 'object' && item !== null && !Array.isArray(item) ? item : {}
    const { content, status } = entry
    if (typeof content !== 'string' || content.trim() === '') throw new ToolError(`Invalid input: todos[${index}].content must be a non-empty string.`, 'invalid_input')
    if (!STATUSES.includes(status as TodoStatus)) throw new ToolError(`Invalid input: todos[${index}].status must be one of ${STATUSES.join(', ')}.`, 'invalid_input')
    return { content, status: status as TodoStatus }
  })
}

/** Reads the stored todo list (empty when none was written). */
export async function loadTodos(store: ToolStateStore): Promise<TodoItem[]> {
  const stored = await store.get(TODO_STATE_KEY)
  return stored === null ? [] : parseTodos(stored[TODO_STATE_KEY])
}

/** Replaces the stored todo list. */
export async function saveTodos(store: ToolStateStore, todos: readonly TodoItem[]): Promise<void> {
  const value: JsonObject = { [TODO_STATE_KEY]: todos.map(todo => ({ content: todo.content, status: todo.status })) }
  await store.set(TODO_STATE_KEY, value)
}

/** Renders the list for the model: one `N. [status] content` line per todo. */
export function formatTodos(todos: readonly TodoItem[]): string {
  if (todos.length === 0) return 'The todo list is empty.'
  return todos.map((todo, index) => `${index + 1}. [${todo.status}] ${todo.content}`).join('\n')
}

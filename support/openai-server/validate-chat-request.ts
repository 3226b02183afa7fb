import type { Json, JsonObject } from './types'

const roles = new Set(['system', 'developer', 'user', 'assistant', 'tool'])
const messageFields: Readonly<Record<string, ReadonlySet<string>>> = {
  system: new Set(['role', 'content', 'name']),
  developer: new Set(['role', 'content', 'name']),
  user: new Set(['role', 'content', 'name']),
  // `reasoning_content` is accepted as DeepSeek-style servers do; OpenAI itself ignores it.
  assistant: new Set(['role', 'content', 'name', 'tool_calls', 'refusal', 'reasoning_content']),
  tool: new Set(['role', 'content', 'tool_call_id']),
}
const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function contentProblems(where: string, content: Json | undefined, role: string): string[] {
  if (typeof content === 'string') return []
  if (content === null && role === 'assistant') return []
  if (!Array.isArray(content)) return [`${where}.content must be a string or an array of parts`]
  return content.flatMap((part, index) => {
    if (!isObject(part)) return [`${where}.content[${index}] is not an object`]
    if (part['type'] === 'text' && typeof part['text'] === 'string') return []
    if (part['type'] === 'image_url' && role === 'user' && isObject(part['image_url']) && typeof part['image_url']['url'] === 'string') return []
    return [`${where}.content[${index}] has an invalid type ${JSON.stringify(part['type'])} for role ${role}`]
  })
}

function toolCallProblems(where: string, calls: Json | undefined): { problems: string[]; ids: string[] } {
  if (calls === undefined) return { problems: [], ids: [] }
  if (!Array.isArray(calls) || calls.length === 0) return { problems: [`${where}.tool_calls must be a non-empty array`], ids: [] }
  const problems: string[] = []
  const ids: string[] = []
  calls.forEach((call, index) => {
    const at = `${where}.tool_calls[${index}]`
    if (!isObject(call) || typeof call['id'] !== 'string' || call['type'] !== 'function' || !isObject(call['function'])) return void problems.push(`${at} must be { id, type: 'function', function }`)
    if (call['id'].length === 0 || call['id'].length > 40) problems.push(`${at}.id must be 1 to 40 characters`)
    ids.push(call['id'])
    const fn = call['function']
    if (typeof fn['name'] !== 'string' || !toolNamePattern.test(fn['name'])) problems.push(`${at}.function.name is invalid`)
    if (typeof fn['arguments'] !== 'string') return void problems.push(`${at}.function.arguments must be a string`)
    try { JSON.parse(fn['arguments']) } catch { problems.push(`${at}.function.arguments is not JSON`) }
  })
  return { problems, ids }
}

/** Problems of `messages`: roles, fields, and every assistant tool call answered by a `tool` message right after it. */
function messagesProblems(messages: Json | undefined): string[] {
  if (!Array.isArray(messages) || messages.length === 0) return ['messages must be a non-empty array']
  const problems: string[] = []
  let open: string[] = []
  messages.forEach((message, index) => {
    const where = `messages[${index}]`
    if (!isObject(message) || typeof message['role'] !== 'string' || !roles.has(message['role'])) return void problems.push(`${where}.role is invalid`)
    const role = message['role']
    const extra = Object.keys(message).filter(key => !messageFields[role]?.has(key))
    if (extra.length > 0) problems.push(`${where}: unrecognized fields ${extra.join(', ')}`)
    if (role === 'tool') {
      if (typeof message['tool_call_id'] !== 'string' || !open.includes(message['tool_call_id'])) problems.push(`${where}: tool_call_id ${JSON.stringify(message['tool_call_id'])} answers no open tool call of the preceding assistant message`)
      open = open.filter(id => id !== message['tool_call_id'])
      if (typeof message['content'] !== 'string' && !Array.isArray(message['content'])) problems.push(`${where}.content must be a string or text parts`)
      return
    }
    if (open.length > 0) problems.push(`${where}: tool calls ${open.join(', ')} of the preceding assistant message have no tool message`)
    open = []
    problems.push(...contentProblems(where, message['content'], role))
    if (role === 'assistant') {
      const calls = toolCallProblems(where, message['tool_calls'])
      problems.push(...calls.problems)
      if (message['content'] === null && calls.ids.length === 0) problems.push(`${where}: content is null without tool_calls`)
      open = calls.ids
    } else if (message['tool_calls'] !== undefined) problems.push(`${where}: only assistant messages have tool_calls`)
  })
  if (open.length > 0) problems.push(`the last assistant message's tool calls ${open.join(', ')} have no tool message`)
  return problems
}

function toolsProblems(tools: Json | undefined): string[] {
  if (tools === undefined) return []
  if (!Array.isArray(tools) || tools.length === 0) return ['tools must be a non-empty array when present']
  return tools.flatMap((tool, index) => {
    if (!isObject(tool) || tool['type'] !== 'function' || !isObject(tool['function'])) return [`tools[${index}] must be { type: 'function', function }`]
    const fn = tool['function']
    const problems = typeof fn['name'] === 'string' && toolNamePattern.test(fn['name']) ? [] : [`tools[${index}].function.name is invalid`]
    if (fn['parameters'] !== undefined && (!isObject(fn['parameters']) || fn['parameters']['type'] !== 'object')) problems.push(`tools[${index}].function.parameters must be an object schema`)
    return problems
  })
}

/**
 * Every way `body` breaks the Chat Completions request shape that the real API (or a strict compatible server)
 * refuses: missing model, unknown roles or message fields (an Anthropic `thinking` block, a `signature`), tool
 * messages that answer no open call, calls left unanswered, malformed tools, `stream_options` without `stream`.
 */
export function validateChatRequest(body: JsonObject | undefined): string[] {
  if (body === undefined) return ['the body is not a JSON object']
  const problems: string[] = []
  if (typeof body['model'] !== 'string' || body['model'] === '') problems.push('model is required')
  if (body['stream_options'] !== undefined && body['stream'] !== true) problems.push('stream_options is only allowed with stream: true')
  if (body['max_tokens'] !== undefined && body['max_completion_tokens'] !== undefined) problems.push('send max_tokens or max_completion_tokens, not both')
  return [...problems, ...messagesProblems(body['messages']), ...toolsProblems(body['tools'])]
}

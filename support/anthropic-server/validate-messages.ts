import type { Json, JsonObject } from './types'

const toolIdPattern = /^[a-zA-Z0-9_-]+$/
const userBlocks = new Set(['text', 'image', 'tool_result', 'document'])
const assistantBlocks = new Set(['text', 'thinking', 'redacted_thinking', 'tool_use'])

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function blockProblems(where: string, role: string, block: Json): string[] {
  if (!isObject(block) || typeof block['type'] !== 'string') return [`${where} is not a block`]
  const type = block['type']
  if (!(role === 'user' ? userBlocks : assistantBlocks).has(type)) return [`${where}: a ${type} block cannot be in a ${role} message`]
  if (type === 'thinking' && typeof block['signature'] !== 'string') return [`${where}: thinking without a signature`]
  if ((type === 'tool_use' && typeof block['id'] === 'string' && !toolIdPattern.test(block['id'])) || (type === 'tool_result' && typeof block['tool_use_id'] === 'string' && !toolIdPattern.test(block['tool_use_id']))) {
    return [`${where}: tool id does not match ${String(toolIdPattern)}`]
  }
  return []
}

function blocksOf(message: JsonObject): Json[] {
  const content = message['content']
  return typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : []
}

/**
 * Every way the `messages` of a Messages API request break what the API accepts: blocks of the wrong role, unsigned
 * thinking, tool ids outside the allowed pattern, empty messages, a first message that is not the user's, and tool
 * results that do not answer exactly the calls of the assistant message right before them.
 */
export function validateMessagesRequest(body: JsonObject | undefined): string[] {
  const messages = body?.['messages']
  if (!Array.isArray(messages) || messages.length === 0) return ['messages must be a non-empty array']
  const problems: string[] = []
  let open: string[] = []
  messages.forEach((message, index) => {
    const where = `messages[${index}]`
    if (!isObject(message) || (message['role'] !== 'user' && message['role'] !== 'assistant')) return void problems.push(`${where}.role is invalid`)
    if (index === 0 && message['role'] !== 'user') problems.push('the first message must be the user\'s')
    const blocks = blocksOf(message)
    if (blocks.length === 0) problems.push(`${where}: empty content`)
    blocks.forEach((block, blockIndex) => problems.push(...blockProblems(`${where}.content[${blockIndex}]`, String(message['role']), block)))
    const results = blocks.filter(isObject).filter(block => block['type'] === 'tool_result').map(block => String(block['tool_use_id']))
    const unexpected = results.filter(id => !open.includes(id))
    if (unexpected.length > 0) problems.push(`${where}: tool results ${unexpected.join(', ')} answer no call of the preceding assistant message`)
    const unanswered = message['role'] === 'user' ? open.filter(id => !results.includes(id)) : open
    if (unanswered.length > 0) problems.push(`${where}: tool calls ${unanswered.join(', ')} have no tool_result`)
    open = message['role'] === 'assistant' ? blocks.filter(isObject).filter(block => block['type'] === 'tool_use').map(block => String(block['id'])) : []
  })
  if (open.length > 0) problems.push(`the last assistant message's tool calls ${open.join(', ')} have no tool_result`)
  return problems
}

import type { JsonObject } from '../json'
import type { ContentBlock, Message, ToolResultBlock } from './content'
import { emptyUsage } from './content'
import type { ModelDelta, ModelResponse, Provider } from './provider'

/** A directive the demo model understands, one per line of the latest user message. */
type Directive = { tool: string; calls: JsonObject[]; label: string }

/**
 * The deterministic demo model `npm start` uses without an API key. Directives, one per line of the prompt:
 * `ask: <question>`, `spawn: <task> | <task>`, `shell: <command>`, `write: <path> <content>`, `read: <path>`,
 * `list: <path>`, `todo: <item> | <item>` (todowrite), `todos:` (todoread), `fail: <message>` (the services' demo tool `fail`),
 * `tool: <name> <json>` (any tool with that input; a JSON array calls it once per element in one turn), `mcp: <server>
 * <tool> <json>` (the MCP tool `<server>__<tool>`, input as for `tool:`); each becomes a turn of tool calls, then a
 * final turn summarizes the results. Anything else is echoed. Text streams word by word, `tokenDelayMs` apart (default 0).
 */
export function demoProvider(options: { model?: string; delayMs?: number; tokenDelayMs?: number } = {}): Provider {
  const model = options.model ?? 'zidane-demo'
  return {
    name: 'demo',
    model,
    async stream(request, onDelta) {
      if (options.delayMs) await new Promise(resolve => setTimeout(resolve, options.delayMs))
      const response = respond(request.messages, model)
      await streamText(response, onDelta, options.tokenDelayMs ?? 0)
      return response
    },
  }
}

/** Streams each text block word by word (whitespace kept), `tokenDelayMs` apart, as a real model streams tokens. */
async function streamText(response: ModelResponse, onDelta: (delta: ModelDelta) => void, tokenDelayMs: number): Promise<void> {
  for (const [index, block] of response.content.entries()) {
    if (block.type !== 'text') continue
    for (const word of block.text.match(/\s*\S+\s*/g) ?? [block.text]) {
      if (tokenDelayMs > 0) await new Promise(resolve => setTimeout(resolve, tokenDelayMs))
      onDelta({ kind: 'text', index, delta: word })
    }
  }
}

function respond(messages: readonly Message[], model: string): ModelResponse {
  const promptIndex = findPromptIndex(messages)
  const prompt = textOfMessage(messages[promptIndex])
  const directives = parseDirectives(prompt)
  const done = messages.slice(promptIndex + 1).filter(message => message.role === 'assistant').length
  const usage = { ...emptyUsage(), inputTokens: Math.ceil(JSON.stringify(messages).length / 4), outputTokens: 12 }
  const next = directives[done]
  if (next) {
    const content: ContentBlock[] = [{ type: 'text', text: `Running ${next.label}.` }, ...next.calls.map((input, index) => ({ type: 'tool_use' as const, id: `demo_${done}_${index}_${hash(prompt)}`, name: next.tool, input }))]
    return { content, stopReason: 'tool_use', usage, costUsd: 0, model }
  }
  const text = directives.length === 0 ? `Echo: ${prompt}` : summarize(messages.slice(promptIndex + 1), directives)
  return { content: [{ type: 'text', text }], stopReason: 'end_turn', usage, costUsd: 0, model }
}

function findPromptIndex(messages: readonly Message[]): number {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]
    if (message?.role === 'user' && message.content.some(block => block.type === 'text')) return index
  }
  return 0
}

function textOfMessage(message: Message | undefined): string {
  return (message?.content ?? []).filter(block => block.type === 'text').map(block => (block as { text: string }).text).join('\n').trim()
}

function parseDirectives(prompt: string): Directive[] {
  return prompt.split('\n').map(line => line.trim()).flatMap(line => {
    const match = /^(ask|spawn|shell|write|read|list|todo|todos|fail|tool|mcp):\s*(.*)$/i.exec(line)
    if (!match) return []
    return [toDirective((match[1] ?? '').toLowerCase(), match[2] ?? '')]
  })
}

function toDirective(verb: string, rest: string): Directive {
  switch (verb) {
    case 'ask': return { tool: 'ask_user', calls: [{ question: rest }], label: `ask_user` }
    case 'spawn': return { tool: 'spawn', calls: rest.split('|').map(task => task.trim()).filter(Boolean).map(task => ({ task })), label: 'spawn' }
    case 'shell': return { tool: 'shell', calls: [{ command: rest }], label: 'shell' }
    case 'write': {
      const space = rest.indexOf(' ')
      return { tool: 'write_file', calls: [{ path: space === -1 ? rest : rest.slice(0, space), content: space === -1 ? '' : rest.slice(space + 1) }], label: 'write_file' }
    }
    case 'read': return { tool: 'read_file', calls: [{ path: rest }], label: 'read_file' }
    case 'todo': return { tool: 'todowrite', calls: [{ todos: rest.split('|').map(item => item.trim()).filter(Boolean).map(content => ({ content, status: 'pending' })) }], label: 'todowrite' }
    case 'todos': return { tool: 'todoread', calls: [{}], label: 'todoread' }
    case 'fail': return { tool: 'fail', calls: [{ message: rest || 'failed on purpose' }], label: 'fail' }
    case 'tool': return anyToolDirective(rest)
    case 'mcp': return mcpToolDirective(rest)
    default: return { tool: 'list_files', calls: [{ path: rest || '.' }], label: 'list_files' }
  }
}

/**
 * `tool: <name> <json>`: one call of any tool with the JSON object as its input, or one call per element when the JSON
 * is an array of objects (called together in one turn). Input that is not JSON is passed on as `{ "input": <text> }`,
 * so the tool's own validation answers it.
 */
function anyToolDirective(rest: string): Directive {
  const space = rest.search(/\s/)
  const name = space === -1 ? rest : rest.slice(0, space)
  const json = space === -1 ? '{}' : rest.slice(space + 1).trim()
  return { tool: name, calls: toolInputs(json), label: name }
}

/** `mcp: <server> <tool> <json>`: `tool: <server>__<tool> <json>`, the name the services give a server's tool. */
function mcpToolDirective(rest: string): Directive {
  const [, server = '', tool = '', input = ''] = /^(\S*)\s*(\S*)\s*(.*)$/s.exec(rest) ?? []
  return anyToolDirective(`${server}__${tool} ${input || '{}'}`)
}

function toolInputs(json: string): JsonObject[] {
  let parsed: unknown
  try {
    parsed = JSON.parse(json)
  } catch {
    return [{ input: json }]
  }
  const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value)
  if (Array.isArray(parsed) && parsed.length > 0 && parsed.every(isObject)) return parsed
  return isObject(parsed) ? [parsed] : [{ input: json }]
}

function summarize(afterPrompt: readonly Message[], directives: readonly Directive[]): string {
  const results = afterPrompt.flatMap(message => message.content.filter((block): block is ToolResultBlock => block.type === 'tool_result'))
  const lines = results.map(result => resultText(result))
  const asked = directives.some(directive => directive.tool === 'ask_user')
  const spawned = directives.some(directive => directive.tool === 'spawn')
  const head = asked ? `You said: ${lines.join(' / ')}` : spawned ? `Children answered: ${lines.join(' / ')}` : `Done: ${lines.join(' / ')}`
  return head.length > 4000 ? `${head.slice(0, 4000)}…` : head
}

function resultText(result: ToolResultBlock): string {
  const text = typeof result.content === 'string' ? result.content : result.content.map(block => (block.type === 'text' ? block.text : '[image]')).join('')
  return text.trim()
}

function hash(value: string): string {
  let result = 0
  for (let index = 0; index < value.length; index++) result = (Math.imul(result, 31) + value.charCodeAt(index)) >>> 0
  return result.toString(36)
}

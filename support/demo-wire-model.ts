import { demoProvider } from 'zidane/providers'
import type { ContentBlock, Message } from 'zidane/providers'
import type { RecordedRequest, ScriptedBlock, ScriptedMessage } from './anthropic-server'

interface WireBlock { type: string; text?: string; id?: string; name?: string; input?: unknown; tool_use_id?: string; content?: unknown; is_error?: boolean }
interface WireMessage { role: 'user' | 'assistant'; content: string | WireBlock[] }

/** The demo model behind the Messages wire: answers a recorded request exactly as `demoProvider` would. */
export async function demoAnswer(request: RecordedRequest): Promise<ScriptedMessage> {
  const messages = ((request.body?.messages ?? []) as unknown as WireMessage[]).map(toMessage)
  const response = await demoProvider().stream({ messages, tools: [], model: 'zidane-demo' } as never, () => undefined)
  const content = response.content.flatMap((block): ScriptedBlock[] => {
    if (block.type === 'text') return [{ type: 'text', text: block.text }]
    if (block.type === 'tool_use') return [{ type: 'tool_use', id: block.id, name: block.name, input: block.input }]
    return []
  })
  return { kind: 'message', content, usage: { input_tokens: 20, output_tokens: 5 } }
}

/** A request's identity: the first user text (the run's prompt or a child's task) and how many turns it follows. */
export function modelStepKey(request: RecordedRequest): string {
  const messages = (request.body?.messages ?? []) as unknown as WireMessage[]
  const first = messages[0]
  const prompt = typeof first?.content === 'string' ? first.content : (first?.content ?? []).map(block => block.text ?? '').join('')
  return `${prompt}#${messages.filter(message => message.role === 'assistant').length}`
}

function toMessage(message: WireMessage): Message {
  const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content
  return { role: message.role, content: blocks.flatMap(toBlock) }
}

function toBlock(block: WireBlock): ContentBlock[] {
  if (block.type === 'text') return [{ type: 'text', text: block.text ?? '' }]
  if (block.type === 'tool_use') return [{ type: 'tool_use', id: block.id ?? '', name: block.name ?? '', input: (block.input ?? {}) as never }]
  if (block.type === 'tool_result') {
    const content = typeof block.content === 'string' ? block.content : ((block.content ?? []) as WireBlock[]).map(part => part.text ?? '').join('')
    return [{ type: 'tool_result', toolUseId: block.tool_use_id ?? '', content, ...(block.is_error ? { isError: true } : {}) }]
  }
  return []
}

import { GatewayError } from '../errors'

/** A message of a `useChat` request as far as the gateway reads it: its role and parts (the rest is passed over). */
export interface ChatRequestMessage {
  id?: string
  role: 'system' | 'user' | 'assistant'
  parts: Array<{ type: string; text?: unknown; state?: unknown; approval?: unknown; toolCallId?: unknown }>
}

/** An approval the client answered (`tool-approval-response`): the approval (awakeable) id, the decision, the call's id. */
export interface ApprovalResponse { id: string; approved: boolean; reason?: string; toolCallId?: string }

/** Longest prompt, as the prompts route allows. */
const MAX_PROMPT_CHARS = 100_000

/** The prompt of a chat request: the text parts of its newest user message (earlier messages are not trusted). */
export function newestUserText(messages: readonly ChatRequestMessage[]): string {
  const newest = messages.findLast(message => message.role === 'user')
  const text = (newest?.parts ?? []).flatMap(part => (part.type === 'text' && typeof part.text === 'string' ? [part.text] : [])).join('\n')
  if (text.trim() === '') throw new GatewayError('invalid_request', 'body.messages has no user message with text')
  if (text.length > MAX_PROMPT_CHARS) throw new GatewayError('invalid_request', `body.messages: the newest user message is over ${MAX_PROMPT_CHARS} characters`)
  return text
}

/**
 * The approvals the client answered: the tool parts of the last message, when it is the assistant's, in state
 * `approval-responded` (the state `addToolApprovalResponse` gives a part of `ai` 7), each approval once. Empty for any other request.
 */
export function approvalResponses(messages: readonly ChatRequestMessage[]): ApprovalResponse[] {
  const last = messages.at(-1)
  if (last?.role !== 'assistant') return []
  // Each approval once (the first part that answers it): a repeated part must not become one more answer call.
  const seen = new Set<string>()
  return last.parts.flatMap(part => {
    const isTool = part.type === 'dynamic-tool' || part.type.startsWith('tool-')
    if (!isTool || part.state !== 'approval-responded' || !isApproval(part.approval) || seen.has(part.approval.id)) return []
    const { id, approved, reason } = part.approval
    seen.add(id)
    const callId = typeof part.toolCallId === 'string' ? { toolCallId: part.toolCallId } : {}
    return [{ id, approved, ...callId, ...(typeof reason === 'string' && reason !== '' ? { reason: reason.slice(0, 2_000) } : {}) }]
  })
}

function isApproval(value: unknown): value is { id: string; approved: boolean; reason?: unknown } {
  if (typeof value !== 'object' || value === null) return false
  const { id, approved } = value as Record<string, unknown>
  return typeof id === 'string' && id !== '' && id.length <= 512 && typeof approved === 'boolean'
}

const toolList = { type: 'array', maxItems: 64, uniqueItems: true, items: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } } as const

/** JSON schema of the body `DefaultChatTransport` sends, with the run settings a page may add (as the prompts route). */
export const chatRequestSchema = {
  type: 'object', required: ['messages'], additionalProperties: false,
  description: "`useChat`'s request (`DefaultChatTransport`): the newest user message's text is the prompt; an assistant message last, with tool parts in state `approval-responded`, answers those approvals.",
  properties: {
    id: { type: 'string', maxLength: 200, description: "The chat's id (the client's; the session is the path's)." },
    messages: {
      type: 'array', minItems: 1, maxItems: 10_000,
      items: {
        type: 'object', required: ['role', 'parts'], additionalProperties: true,
        properties: {
          id: { type: 'string', maxLength: 200 },
          role: { type: 'string', enum: ['system', 'user', 'assistant'] },
          parts: { type: 'array', maxItems: 10_000, items: { type: 'object', required: ['type'], additionalProperties: true, properties: { type: { type: 'string', minLength: 1, maxLength: 200 } } } },
        },
      },
    },
    trigger: { type: 'string', enum: ['submit-message', 'regenerate-message'] },
    messageId: { type: 'string', maxLength: 200 },
    model: { type: 'string', minLength: 1, maxLength: 200 },
    maxTurns: { type: 'integer', minimum: 1, maximum: 500 },
    policy: {
      type: 'object', additionalProperties: false,
      description: "This run's tool policy (as for prompts): `approve` lists tools whose calls wait for an approval (sent as `tool-approval-request`), `deny` tools the run may not use.",
      properties: { approve: toolList, deny: toolList },
    },
  },
} as const

/** The body {@link chatRequestSchema} admits. */
export interface ChatRequestBody {
  id?: string
  messages: ChatRequestMessage[]
  trigger?: 'submit-message' | 'regenerate-message'
  messageId?: string
  model?: string
  maxTurns?: number
  policy?: { approve?: string[]; deny?: string[] }
}

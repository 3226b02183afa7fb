import type { RunAgentInput } from '@ag-ui/core'
import { RunAgentInputSchema } from '@ag-ui/core/schemas'
import { GatewayError } from '../errors'
import { SESSION_ID_PATTERN } from '../tenancy'

/**
 * The route's JSON schema of a `RunAgentInput` (for validation messages that name the field, and the OpenAPI document):
 * `threadId` is the session id. Fields AG-UI may add later are let through; `@ag-ui/core`'s own schema then checks the
 * whole input ({@link parseRunAgentInput}).
 */
export const runAgentInputSchema = {
  type: 'object',
  required: ['threadId', 'runId', 'messages'],
  description: "An AG-UI `RunAgentInput`. `threadId` is the session id; the newest user message's text is the prompt (the rest of `messages` is not trusted: the session keeps the conversation); `resume` answers interrupts by id.",
  properties: {
    threadId: { type: 'string', pattern: SESSION_ID_PATTERN, description: 'The session id: letters, digits, `_` and `-`, 1 to 128 characters.' },
    runId: { type: 'string', minLength: 1, maxLength: 200, description: "The client's id of this AG-UI run (echoed in `RUN_STARTED` and `RUN_FINISHED`)." },
    protocolVersion: { type: 'string', maxLength: 32 },
    parentRunId: { type: 'string', maxLength: 200 },
    messages: { type: 'array', maxItems: 10_000, items: { type: 'object', required: ['id', 'role'], properties: { id: { type: 'string', maxLength: 200 }, role: { type: 'string' } } } },
    tools: { type: 'array', maxItems: 256, description: 'Ignored: the session runs its own tools (client-side tools are not called).' },
    context: { type: 'array', maxItems: 100 },
    state: {},
    forwardedProps: {
      description: '`mode: "steer"` sends the prompt into the running run instead of refusing it (409 `run_active`); `subagents: true` forwards sub-agent events.',
    },
    resume: {
      type: 'array', maxItems: 64,
      items: { type: 'object', required: ['interruptId', 'status'], properties: { interruptId: { type: 'string', minLength: 1, maxLength: 512 }, status: { type: 'string', enum: ['resolved', 'cancelled'] }, payload: {}, metadata: { type: 'object' } } },
    },
  },
} as const

/** `input` checked against `@ag-ui/core`'s `RunAgentInputSchema`; 400 `invalid_request` naming the first bad field. */
export function parseRunAgentInput(input: unknown): RunAgentInput {
  const parsed = RunAgentInputSchema.safeParse(input)
  if (parsed.success) return parsed.data as RunAgentInput
  const [issue] = parsed.error.issues
  const path = ['body', ...(issue?.path ?? []).map(String)].join('.')
  throw new GatewayError('invalid_request', `${path} ${issue?.message ?? 'is invalid'}`)
}

/** The text of the newest message, when it is a user message; undefined otherwise (a resume, or a reconnect). */
export function newestUserText(input: RunAgentInput): { id: string; text: string } | undefined {
  const newest = input.messages.at(-1)
  if (newest?.role !== 'user') return undefined
  const text = typeof newest.content === 'string' ? newest.content : newest.content.flatMap(part => (part.type === 'text' ? [part.text] : [])).join('')
  if (text.trim() === '') throw new GatewayError('invalid_request', 'body.messages: the newest user message has no text')
  if (text.length > 100_000) throw new GatewayError('invalid_request', 'body.messages: the newest user message is longer than 100000 characters')
  return { id: newest.id, text }
}

/** The options a client passes in `forwardedProps`: steering (`mode: "steer"`) and sub-agent events (`subagents: true`). */
export function forwardedOptions(input: RunAgentInput): { steer: boolean; subagents: boolean } {
  const props: unknown = input.forwardedProps
  const record = typeof props === 'object' && props !== null ? (props as Record<string, unknown>) : {}
  return { steer: record.mode === 'steer', subagents: record.subagents === true }
}

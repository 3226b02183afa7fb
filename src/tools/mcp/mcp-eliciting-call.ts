import type { JsonObject, JsonValue } from '../../json'
import type { ToolResult } from '../tool'
import type { ElicitHandler, McpConnector, McpScope } from './mcp-connector'
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import { mcpResultToToolResult } from './mcp-result'
import type { McpCallResult } from './mcp-result'
import { redactSecrets } from './mcp-server-config'
import type { McpServerConfig } from './mcp-server-config'
import type { McpToolEntry } from './mcp-tool-list'
import { MCP_IDEMPOTENCY_META_KEY } from './mcp-tools'

/** Where a call that may ask for input stands: ended with its result, or waiting for an answer to `message`. */
export type McpCallPhase =
  | { kind: 'result'; result: { content: ToolResult['content']; isError?: boolean } }
  | { kind: 'elicit'; message: string; requestedSchema: JsonObject }

/** How long a call that may ask for input may take, the person's answers included. */
const ELICITING_CALL_TIMEOUT_MS = 24 * 60 * 60 * 1000

interface OpenCall { settle: (phase: McpCallPhase) => void; reply?: ((value: JsonValue) => void) | undefined }

/**
 * The calls of servers that may ask for input (`elicitation: true`) this process holds open, by `<run id>:<call id>`:
 * each phase of such a call is a step of its own, and a person's answer reaches the open call through this process.
 * A call this process does not hold (it died, or another replica runs the run now) cannot be continued: its next
 * phase reads `undefined`, which the caller reports as interrupted. Never a second send.
 */
export interface McpElicitingCalls {
  /** Connects, sends the call and resolves with its first phase. */
  start(entry: McpToolEntry, server: McpServerConfig, scope: McpScope, input: JsonObject, key: string, signal: AbortSignal): Promise<McpCallPhase>
  /** Gives the open call `key` the person's answer and resolves with its next phase; `undefined` when no such call is open here. */
  answer(key: string, value: JsonValue): Promise<McpCallPhase> | undefined
}

/** The open calls of `connector`'s servers, in this process. */
export function createMcpElicitingCalls(connector: McpConnector): McpElicitingCalls {
  const open = new Map<string, OpenCall>()
  return {
    start: (entry, server, scope, input, key, signal) => new Promise((resolveFirst) => {
      const call: OpenCall = { settle: resolveFirst }
      open.set(key, call)
      const finish = (phase: McpCallPhase): void => { open.delete(key); call.settle(phase) }
      const onElicit: ElicitHandler = request => new Promise((resolveReply) => {
        call.reply = value => resolveReply(elicitResult(value, request.requestedSchema))
        call.settle({ kind: 'elicit', message: request.message, requestedSchema: JSON.parse(JSON.stringify(request.requestedSchema)) as JsonObject })
      })
      void sendCall(connector, { entry, server, scope, input, key, signal, onElicit }).then(finish)
    }),
    answer: (key, value) => {
      const call = open.get(key)
      const reply = call?.reply
      if (call === undefined || reply === undefined) return undefined
      call.reply = undefined
      return new Promise((resolve) => {
        call.settle = resolve
        reply(value)
      })
    },
  }
}

interface CallRequest { entry: McpToolEntry; server: McpServerConfig; scope: McpScope; input: JsonObject; key: string; signal: AbortSignal; onElicit: ElicitHandler }

/** Sends the call on a connection of its own and resolves with its result (an error result when it failed). */
async function sendCall(connector: McpConnector, request: CallRequest): Promise<McpCallPhase> {
  const { entry, server, scope, input, key, signal, onElicit } = request
  let secrets: ReadonlySet<string> = new Set()
  try {
    const connection = await connector.connectAlone(server, scope, onElicit, signal)
    secrets = connection.secrets
    try {
      const result = await connection.client.callTool({ name: entry.tool, arguments: input, _meta: { [MCP_IDEMPOTENCY_META_KEY]: key } }, undefined, { timeout: ELICITING_CALL_TIMEOUT_MS, signal })
      return { kind: 'result', result: mcpResultToToolResult(result as McpCallResult) }
    } finally {
      await connection.client.close().catch(() => undefined)
    }
  } catch (error) {
    return { kind: 'result', result: { content: `The MCP tool ${entry.name} failed: ${redactSecrets(error instanceof Error ? error.message : String(error), secrets)}`, isError: true } }
  }
}

/**
 * A person's answer as an elicitation result: an object (or JSON text of one) accepts with it as the form's content;
 * `decline` and `cancel` say so; other text fills the form's only field, or declines a form of several fields.
 */
export function elicitResult(value: JsonValue, requestedSchema: Record<string, unknown>): ElicitResult {
  const parsed = typeof value === 'string' ? parseObject(value) : value
  if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return { action: 'accept', content: parsed as ElicitResult['content'] & object }
  const text = String(value).trim()
  if (text === 'decline' || text === 'cancel') return { action: text }
  const fields = Object.keys((requestedSchema.properties ?? {}))
  return fields.length === 1 ? { action: 'accept', content: { [fields[0] as string]: text } } : { action: 'decline' }
}

function parseObject(text: string): JsonValue {
  try {
    return JSON.parse(text) as JsonValue
  } catch {
    return text
  }
}

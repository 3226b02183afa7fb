import type { JsonObject } from '../../json'
import { ToolError } from '../tool'
import type { ToolContext, ToolDef, ToolResult } from '../tool'
import type { McpConnector, McpScope } from './mcp-connector'
import { mcpResultToToolResult } from './mcp-result'
import type { McpCallResult } from './mcp-result'
import { MCP_CALL_TIMEOUT_MS, redactSecrets } from './mcp-server-config'
import type { McpServerConfig } from './mcp-server-config'
import type { McpToolEntry, McpToolList } from './mcp-tool-list'

/** The `_meta` key of every `tools/call`'s idempotency key (`<run id>:<call id>`), for servers that honour one. */
export const MCP_IDEMPOTENCY_META_KEY = 'io.zidane/idempotency-key'

/**
 * The tools of a run's journaled `list`, as tools of the loop: each call is one step of the loop (a read-only tool,
 * `readOnlyHint`, replays as safe; every other one is unsafe, so a call in flight at a crash is reported interrupted
 * and never sent twice), sent to its server with the run's idempotency key, bounded by the server's call timeout.
 * A server that is down, unknown to this process or too slow gives the model an error result, never a stuck run.
 */
export function createMcpTools(list: McpToolList, servers: readonly McpServerConfig[], connector: McpConnector, scope: McpScope): ToolDef[] {
  const byName = new Map(servers.map(server => [server.name, server]))
  return list.tools.map((entry): ToolDef => ({
    spec: { name: entry.name, description: entry.description, inputSchema: entry.inputSchema },
    ...(entry.readOnly ? { replay: 'safe' as const, isConcurrencySafe: true } : {}),
    usesToolState: false,
    execute: (input, ctx) => callMcpTool(entry, byName.get(entry.server), connector, scope, input, ctx),
  }))
}

async function callMcpTool(entry: McpToolEntry, server: McpServerConfig | undefined, connector: McpConnector, scope: McpScope, input: JsonObject, ctx: ToolContext): Promise<ToolResult> {
  if (server === undefined) throw new ToolError(`The MCP server "${entry.server}" is no longer configured on this services process.`, 'mcp_server_unknown')
  let secrets: ReadonlySet<string> = new Set()
  try {
    const connection = await connector.connect(server, scope, ctx.signal)
    secrets = connection.secrets
    const request = { name: entry.tool, arguments: input, _meta: { [MCP_IDEMPOTENCY_META_KEY]: `${ctx.runId}:${ctx.callId}` } }
    const result = await connection.client.callTool(request, undefined, { timeout: server.callTimeoutMs ?? MCP_CALL_TIMEOUT_MS, signal: ctx.signal })
    return mcpResultToToolResult(result as McpCallResult)
  } catch (error) {
    // The next call connects again: a restarted server, or a session it forgot, is picked up.
    connector.drop(server, scope)
    const message = redactSecrets(error instanceof Error ? error.message : String(error), secrets)
    throw new ToolError(`The MCP tool ${entry.name} failed: ${message}`, 'mcp_call_failed')
  }
}

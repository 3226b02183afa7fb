import { readFileSync } from 'node:fs'
import type * as restate from '@restatedev/restate-sdk'
import type { ToolDef } from 'zidane'
import { ConfigurationError } from 'zidane'
import { journalStep } from 'zidane/restate'
import { createMcpConnector, createMcpTools, listMcpTools, mcpServersOfTenant, parseMcpServers } from 'zidane/tools'
import type { McpConnector, McpServerConfig, McpToolList } from 'zidane/tools'
import type { ShellPolicy } from './shell-policy'

/** The operator's MCP servers and the connections this process keeps to them. */
export interface McpOffer {
  servers: readonly McpServerConfig[]
  connector: McpConnector
}

/**
 * The MCP servers of `env`: `ZIDANE_MCP_SERVERS` (JSON) and the file `ZIDANE_MCP_CONFIG` names, together (docs/mcp.md).
 * Stdio servers run in the shell's sandbox as `capability` allows it: refused when the sandbox is required and not
 * usable, plain processes where the operator runs `shell` unsandboxed. Credentials are not read here: each connection
 * resolves the `${NAME}` references it needs from `env` when it is made.
 */
export function createMcpOffer(env: NodeJS.ProcessEnv, capability: ShellPolicy): McpOffer {
  const servers = [
    ...(env.ZIDANE_MCP_SERVERS ? parseMcpServers(env.ZIDANE_MCP_SERVERS, 'ZIDANE_MCP_SERVERS') : []),
    ...(env.ZIDANE_MCP_CONFIG ? parseMcpServers(readConfigFile(env.ZIDANE_MCP_CONFIG), env.ZIDANE_MCP_CONFIG) : []),
  ]
  const names = servers.map(server => server.name)
  const duplicate = names.find((name, index) => names.indexOf(name) !== index)
  if (duplicate !== undefined) throw new ConfigurationError(`two MCP servers are named "${duplicate}"`, 'mcp_config_invalid')
  const sandbox = capability.status.mode === 'disabled' ? 'refuse' : capability.options.sandbox
  return { servers, connector: createMcpConnector({ env, ...(sandbox ? { sandbox } : {}) }) }
}

function readConfigFile(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    throw new ConfigurationError(`ZIDANE_MCP_CONFIG: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`, 'mcp_config_invalid')
  }
}

/**
 * The MCP tools of a run of `tenant` in workspace `root`: the tool list of each of the tenant's servers, fetched once
 * per run in one journaled step (`mcp-tools`), so a replay offers the same tools whatever the servers say by then. A
 * run of a tenant without servers journals nothing. The list holds names, descriptions and schemas, never a
 * credential; a server that could not be listed offers no tool to the run.
 */
export async function mcpRunTools(ctx: restate.Context, mcp: McpOffer, tenant: string, root: string): Promise<ToolDef[]> {
  const servers = mcpServersOfTenant(mcp.servers, tenant)
  if (servers.length === 0) return []
  const scope = { workspace: root, tenant }
  const list = await journalStep<McpToolList>(ctx, 'mcp-tools', () => listMcpTools(servers, mcp.connector, scope))
  return createMcpTools(list, servers, mcp.connector, scope)
}

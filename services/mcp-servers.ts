import { readFileSync } from 'node:fs'
import type * as restate from '@restatedev/restate-sdk'
import type { ToolDef } from 'zidane'
import { ConfigurationError } from 'zidane'
import { journalStep } from 'zidane/restate'
import { createMcpConnector, createMcpElicitingCalls, createMcpTools, listMcpTools, mcpServersOfTenant, parseMcpServers } from 'zidane/tools'
import type { McpConnector, McpElicitingCalls, McpServerConfig, McpToolList } from 'zidane/tools'
import { elicitingMcpTool } from './mcp-elicitation'
import type { AskUser } from './mcp-elicitation'
import type { RunSettings } from '../contract/session'
import type { ShellPolicy } from './shell-policy'

/** The operator's MCP servers and the connections this process keeps to them. */
export interface McpOffer {
  servers: readonly McpServerConfig[]
  connector: McpConnector
  /** The calls of servers that may ask for input, held open in this process while their questions wait. */
  elicitingCalls: McpElicitingCalls
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
  const connector = createMcpConnector({ env, ...(sandbox ? { sandbox } : {}) })
  return { servers, connector, elicitingCalls: createMcpElicitingCalls(connector) }
}

function readConfigFile(path: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    throw new ConfigurationError(`ZIDANE_MCP_CONFIG: cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`, 'mcp_config_invalid')
  }
}

/** The names of `tenant`'s servers, for the run's journaled settings (`RunSettings.mcpServers`); none: nothing. */
export function mcpSettings(mcp: McpOffer, tenant: string): Pick<RunSettings, 'mcpServers'> {
  const names = mcpServersOfTenant(mcp.servers, tenant).map(server => server.name)
  return names.length === 0 ? {} : { mcpServers: names }
}

/**
 * The MCP tools of a run of `tenant` in workspace `root` whose journaled `settings` name servers: the tool list of
 * each, fetched once per run in one journaled step (`mcp-tools`), so a replay offers the same tools whatever the
 * servers say by then. Whether the step is issued depends on the settings only, never on this process's
 * configuration, so a replay after the operator changed it takes the same path. A named server this process no
 * longer configures, or that could not be listed, offers no tool to the run. The list holds names, descriptions and
 * schemas, never a credential. With `ask` (a session's run), the tools of servers that may ask for input
 * (`elicitation: true`) turn those requests into questions ({@link elicitingMcpTool}); without it (a sub-agent, which
 * cannot ask) they are called without announcing elicitation.
 */
export async function mcpRunTools(ctx: restate.Context, mcp: McpOffer, settings: RunSettings, tenant: string, root: string, ask?: AskUser): Promise<ToolDef[]> {
  const names = settings.mcpServers ?? []
  if (names.length === 0) return []
  const servers = mcp.servers.filter(server => names.includes(server.name))
  const scope = { workspace: root, tenant }
  const list = await journalStep<McpToolList>(ctx, 'mcp-tools', async () => {
    const listed = await listMcpTools(servers, mcp.connector, scope)
    const gone = names.filter(name => !servers.some(server => server.name === name)).map(server => ({ server, message: 'no longer configured on this services process' }))
    return { tools: listed.tools, failures: [...listed.failures, ...gone] }
  })
  const tools = createMcpTools(list, servers, mcp.connector, scope)
  if (ask === undefined) return tools
  return tools.map((tool, index) => {
    const entry = list.tools[index]
    const server = servers.find(candidate => candidate.name === entry?.server)
    return entry !== undefined && server?.elicitation === true ? elicitingMcpTool(tool, entry, server, mcp.elicitingCalls, scope, ask) : tool
  })
}

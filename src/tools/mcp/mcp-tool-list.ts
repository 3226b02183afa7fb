import { createHash } from 'node:crypto'
import type { JsonObject } from '../../json'
import type { McpConnector, McpScope } from './mcp-connector'
import type { McpServerConfig } from './mcp-server-config'

/** One tool of a server as a run offers it: plain JSON, journaled once per run (no credential in it). */
export interface McpToolEntry {
  server: string
  /** The tool's name on its server. */
  tool: string
  /** The name the model sees: `<server>__<tool>`, within `[A-Za-z0-9_-]{1,64}`. */
  name: string
  description: string
  inputSchema: JsonObject
  /** The server says the tool only reads (`annotations.readOnlyHint`): a call in flight at a crash runs again. */
  readOnly: boolean
}

/** The tools of a run's servers, and the servers that could not be listed (with why). */
export interface McpToolList {
  tools: McpToolEntry[]
  failures: { server: string; message: string }[]
}

const MAX_NAME = 64

/**
 * The model-facing name of `tool` of `server`: `<server>__<tool>` with every character outside `[A-Za-z0-9_-]`
 * replaced by `_`; a name past 64 characters is cut and ends with a hash of the whole, so it stays unique.
 */
export function mcpToolName(server: string, tool: string): string {
  const name = `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_')
  if (name.length <= MAX_NAME && name === `${server}__${tool}`) return name
  const hash = createHash('sha256').update(`${server}\0${tool}`).digest('hex').slice(0, 8)
  return `${name.slice(0, MAX_NAME - 9)}_${hash}`
}

/**
 * Lists the tools of every server in `servers` (all at once, each bounded by its connect timeout): a server that
 * fails is reported in `failures` and offers no tool to this run, which goes on.
 */
export async function listMcpTools(servers: readonly McpServerConfig[], connector: McpConnector, scope: McpScope): Promise<McpToolList> {
  const listed = await Promise.all(servers.map(async (server) => {
    try {
      return { tools: await listServer(server, connector, scope) }
    } catch (error) {
      connector.drop(server, scope)
      return { failure: { server: server.name, message: error instanceof Error ? error.message : String(error) } }
    }
  }))
  return {
    tools: listed.flatMap(entry => entry.tools ?? []),
    failures: listed.flatMap(entry => (entry.failure ? [entry.failure] : [])),
  }
}

async function listServer(server: McpServerConfig, connector: McpConnector, scope: McpScope): Promise<McpToolEntry[]> {
  const { client } = await connector.connect(server, scope)
  const entries: McpToolEntry[] = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: server.connectTimeoutMs ?? 10_000 })
    for (const tool of page.tools) {
      entries.push({
        server: server.name,
        tool: tool.name,
        name: mcpToolName(server.name, tool.name),
        description: tool.description ?? tool.title ?? tool.name,
        inputSchema: JSON.parse(JSON.stringify(tool.inputSchema)) as JsonObject,
        readOnly: tool.annotations?.readOnlyHint === true,
      })
    }
    cursor = page.nextCursor
  } while (cursor !== undefined && entries.length < 1000)
  return entries
}

import { ConfigurationError } from '../../errors/zidane-error'

/**
 * One MCP server the operator configured. `http`: Streamable HTTP at `url`, with `headers`; `stdio`: `command` run
 * with `bash -c` inside the session's sandbox, with `env` as its whole environment besides PATH, LANG, TERM and HOME.
 * Values of `url`, `headers` and `env` may name variables of the services' environment as `${NAME}`: they are
 * resolved when a connection is made and never stored anywhere else (the journal holds only the tools' specs).
 */
export interface McpServerConfig {
  /** `[A-Za-z0-9_-]`, 1 to 32 characters: the prefix of its tools' names (`<name>__<tool>`). */
  name: string
  transport: 'http' | 'stdio'
  url?: string
  headers?: Record<string, string>
  command?: string
  env?: Record<string, string>
  /** Host files or folders a stdio server may read (bound read-only at the same path): its program and libraries. */
  readOnlyPaths?: string[]
  /** The tenants whose runs get this server; every tenant when unset. */
  tenants?: string[]
  /** Time to connect and initialize. Default {@link MCP_CONNECT_TIMEOUT_MS}. */
  connectTimeoutMs?: number
  /** Time one `tools/call` may take. Default {@link MCP_CALL_TIMEOUT_MS}. */
  callTimeoutMs?: number
  /**
   * The server may ask the session's user for input during a call (elicitation): each call gets a connection of its
   * own, and each request becomes a question in the session's pending list. Default false (not announced).
   */
  elicitation?: boolean
}

/** Default time to connect to a server and initialize the session. */
export const MCP_CONNECT_TIMEOUT_MS = 10_000
/** Default time of one `tools/call`. */
export const MCP_CALL_TIMEOUT_MS = 60_000

const NAME = /^[A-Za-z0-9_-]{1,32}$/

/** Parses and checks the operator's server list (a JSON array, or `{ "servers": [...] }`); throws `ConfigurationError`. */
export function parseMcpServers(json: string, origin: string): McpServerConfig[] {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch (error) {
    throw new ConfigurationError(`${origin} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`, 'mcp_config_invalid')
  }
  const list = Array.isArray(value) ? value : (value as { servers?: unknown } | null)?.servers
  if (!Array.isArray(list)) throw new ConfigurationError(`${origin} must be a JSON array of servers (or { "servers": [...] })`, 'mcp_config_invalid')
  const servers = list.map((entry, index) => checkServer(entry, `${origin}[${index}]`))
  const names = new Set<string>()
  for (const server of servers) {
    if (names.has(server.name)) throw new ConfigurationError(`${origin}: two servers are named "${server.name}"`, 'mcp_config_invalid')
    names.add(server.name)
  }
  return servers
}

function checkServer(entry: unknown, where: string): McpServerConfig {
  const fail = (message: string): never => { throw new ConfigurationError(`${where}: ${message}`, 'mcp_config_invalid') }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return fail('a server is an object')
  const server = entry as Record<string, unknown>
  if (typeof server.name !== 'string' || !NAME.test(server.name)) fail('"name" must be 1 to 32 of A-Z a-z 0-9 _ -')
  if (server.transport !== 'http' && server.transport !== 'stdio') fail('"transport" must be "http" or "stdio"')
  if (server.transport === 'http' && typeof server.url !== 'string') fail('an http server needs a "url"')
  if (server.transport === 'stdio' && typeof server.command !== 'string') fail('a stdio server needs a "command"')
  for (const key of ['headers', 'env'] as const) if (server[key] !== undefined && !isStringRecord(server[key])) fail(`"${key}" must map names to strings`)
  for (const key of ['readOnlyPaths', 'tenants'] as const) if (server[key] !== undefined && !isStringList(server[key])) fail(`"${key}" must be a list of strings`)
  if (server.elicitation !== undefined && typeof server.elicitation !== 'boolean') fail('"elicitation" must be true or false')
  for (const key of ['connectTimeoutMs', 'callTimeoutMs'] as const) if (server[key] !== undefined && !(typeof server[key] === 'number' && server[key] > 0)) fail(`"${key}" must be a number above 0`)
  return server as unknown as McpServerConfig
}

function isStringRecord(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every(item => typeof item === 'string')
}

function isStringList(value: unknown): boolean {
  return Array.isArray(value) && value.every(item => typeof item === 'string')
}

/** The servers of `servers` that runs of `tenant` get. */
export function mcpServersOfTenant(servers: readonly McpServerConfig[], tenant: string): McpServerConfig[] {
  return servers.filter(server => server.tenants === undefined || server.tenants.includes(tenant))
}

/**
 * `template` with every `${NAME}` replaced by `env.NAME`, and the values it used (to redact them from messages).
 * A variable that is not set is an error naming it, never an empty credential sent.
 */
export function resolveSecretTemplate(template: string, env: NodeJS.ProcessEnv, secrets: Set<string>): string {
  return template.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
    const value = env[name]
    if (value === undefined || value === '') throw new ConfigurationError(`the variable ${name} the MCP configuration names is not set`, 'mcp_secret_missing')
    secrets.add(value)
    return value
  })
}

/** `message` with every value of `secrets` replaced by `[redacted]`. */
export function redactSecrets(message: string, secrets: ReadonlySet<string>): string {
  let text = message
  for (const secret of secrets) if (secret.length >= 4) text = text.split(secret).join('[redacted]')
  return text
}

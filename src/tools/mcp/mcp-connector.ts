import { realpathSync } from 'node:fs'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js'
import type { CommandSandbox } from '../builtin/command-sandbox'
import { SandboxedStdioTransport } from './sandboxed-stdio-transport'
import { toolEnvironment } from '../builtin/tool-environment'
import { MCP_CONNECT_TIMEOUT_MS, redactSecrets, resolveSecretTemplate } from './mcp-server-config'
import type { McpServerConfig } from './mcp-server-config'

/** Where a run's MCP servers work: the session's workspace and tenant (stdio servers run there, in the sandbox). */
export interface McpScope {
  workspace: string
  tenant?: string
}

/** A connected server and the values of the credentials it was given (to redact them from any message). */
export interface McpConnection {
  client: Client
  secrets: ReadonlySet<string>
}

/** Opens connections to the configured servers, keeps each open while it is used, and drops those that fail. */
export interface McpConnector {
  connect(server: McpServerConfig, scope: McpScope, signal?: AbortSignal): Promise<McpConnection>
  /**
   * A connection of its own, not shared nor kept (the caller closes it), announcing the `elicitation` capability with
   * `onElicit` answering the server's requests for input: a call that may ask its user something.
   */
  connectAlone(server: McpServerConfig, scope: McpScope, onElicit: ElicitHandler, signal?: AbortSignal): Promise<McpConnection>
  /** Closes and forgets the connection (after a failure: the next call connects again). */
  drop(server: McpServerConfig, scope: McpScope): void
  closeAll(): Promise<void>
}

/** Options of {@link createMcpConnector}. */
export interface McpConnectorOptions {
  /** Where `${NAME}` references are read, when a connection is made. Default: `process.env`. */
  env?: NodeJS.ProcessEnv
  /** The sandbox stdio servers run in; `undefined` runs them as plain processes, `'refuse'` refuses them. */
  sandbox?: CommandSandbox | 'refuse'
  /** How long an unused connection stays open. Default 30 s. */
  idleMs?: number
}

/**
 * A connector: one connection per server and tenant (and workspace, for stdio servers), made on first use, closed after
 * `idleMs` without use. Credentials are resolved from `env` at each connection and kept nowhere else.
 */
export function createMcpConnector(options: McpConnectorOptions = {}): McpConnector {
  const env = options.env ?? process.env
  const idleMs = options.idleMs ?? 30_000
  const open = new Map<string, { connection: Promise<McpConnection>; timer?: NodeJS.Timeout }>()
  // Never shared between tenants (a stateful server keeps a session's state), nor between workspaces for stdio.
  const keyOf = (server: McpServerConfig, scope: McpScope): string => [server.name, scope.tenant ?? '', server.transport === 'stdio' ? scope.workspace : ''].join('\0')
  const drop = (key: string): void => {
    const entry = open.get(key)
    if (!entry) return
    open.delete(key)
    clearTimeout(entry.timer)
    entry.connection.then(({ client }) => client.close(), () => undefined).catch(() => undefined)
  }
  return {
    connect: (server, scope, signal) => {
      const key = keyOf(server, scope)
      let entry = open.get(key)
      if (!entry) {
        entry = { connection: connectServer(server, scope, env, options.sandbox, signal) }
        open.set(key, entry)
        entry.connection.catch(() => drop(key))
      }
      clearTimeout(entry.timer)
      entry.timer = setTimeout(() => drop(key), idleMs).unref()
      return entry.connection
    },
    connectAlone: (server, scope, onElicit, signal) => connectServer(server, scope, env, options.sandbox, signal, onElicit),
    drop: (server, scope) => drop(keyOf(server, scope)),
    closeAll: async () => {
      for (const key of [...open.keys()]) drop(key)
    },
  }
}

/** Answers a server's `elicitation/create` request (its message and the form's JSON schema). */
export type ElicitHandler = (request: { message: string; requestedSchema: Record<string, unknown> }) => Promise<ElicitResult>

async function connectServer(server: McpServerConfig, scope: McpScope, env: NodeJS.ProcessEnv, sandbox: CommandSandbox | 'refuse' | undefined, signal?: AbortSignal, onElicit?: ElicitHandler): Promise<McpConnection> {
  const secrets = new Set<string>()
  const client = new Client({ name: 'zidane', version: '0.1.0' }, { capabilities: onElicit ? { elicitation: { form: {} } } : {} })
  if (onElicit) client.setRequestHandler(ElicitRequestSchema, request => onElicit({ message: request.params.message, requestedSchema: 'requestedSchema' in request.params ? request.params.requestedSchema as Record<string, unknown> : {} }))
  // An unused connection must never hold the services process open nor throw unhandled.
  client.onerror = () => undefined
  try {
    const transport = server.transport === 'http' ? httpTransport(server, env, secrets) : stdioTransport(server, scope, env, sandbox, secrets)
    await client.connect(transport, { timeout: server.connectTimeoutMs ?? MCP_CONNECT_TIMEOUT_MS, ...(signal ? { signal } : {}) })
    return { client, secrets }
  } catch (error) {
    await client.close().catch(() => undefined)
    throw new Error(`cannot connect to the MCP server "${server.name}": ${redactSecrets(error instanceof Error ? error.message : String(error), secrets)}`)
  }
}

function httpTransport(server: McpServerConfig, env: NodeJS.ProcessEnv, secrets: Set<string>): Transport {
  const url = new URL(resolveSecretTemplate(server.url ?? '', env, secrets))
  const headers = Object.fromEntries(Object.entries(server.headers ?? {}).map(([name, value]) => [name, resolveSecretTemplate(value, env, secrets)]))
  return new StreamableHTTPClientTransport(url, { requestInit: { headers } })
}

function stdioTransport(server: McpServerConfig, scope: McpScope, env: NodeJS.ProcessEnv, sandbox: CommandSandbox | 'refuse' | undefined, secrets: Set<string>): Transport {
  if (sandbox === 'refuse') throw new Error('stdio servers run only inside the sandbox, which is not usable on this host')
  const named = Object.fromEntries(Object.entries(server.env ?? {}).map(([name, value]) => [name, resolveSecretTemplate(value, env, secrets)]))
  const processEnv = { ...toolEnvironment(scope.workspace, [], env), ...named }
  const readOnlyPaths = (server.readOnlyPaths ?? []).map(path => realpathSync(path))
  const wrapOptions = { readOnlyPaths, ...(scope.tenant === undefined ? {} : { tenant: scope.tenant }) }
  return new SandboxedStdioTransport({ command: server.command ?? '', workspace: scope.workspace, env: processEnv, wrapOptions, ...(sandbox ? { sandbox } : {}) })
}

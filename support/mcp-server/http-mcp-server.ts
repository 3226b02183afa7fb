import { createServer } from 'node:http'
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { createTestMcpServer } from './test-mcp-server'
import type { McpCallRecord } from './test-mcp-server'

/**
 * A Streamable HTTP server of the test tools (stateless: a server per request), refusing requests without `Bearer
 * token`. `calls` lists every `tools/call` it received; `down` makes it drop every request unanswered.
 */
export interface HttpMcpServer { url: string; calls: McpCallRecord[]; requests: number; down: boolean; close(): Promise<void> }

/** Options of {@link startHttpMcpServer}. */
export interface HttpMcpServerOptions {
  token?: string
  /** Goes `down` once it answered a `tools/list`: a server that dies between a run's listing and its calls. */
  downAfterList?: boolean
  /** Sees every `tools/call` as it arrives (a test's trigger). */
  onCall?: (record: McpCallRecord) => void
}

/** Starts the test tools over Streamable HTTP on a free port of 127.0.0.1. */
export async function startHttpMcpServer(options: HttpMcpServerOptions = {}): Promise<HttpMcpServer> {
  const calls: McpCallRecord[] = []
  const state: HttpState = { requests: 0, down: false, options, calls }
  const http: HttpServer = createServer((req, res) => { handleHttp(req, res, state).catch(() => res.destroy()) })
  await new Promise<void>(resolve => http.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    get requests() { return state.requests },
    get down() { return state.down },
    set down(value: boolean) { state.down = value },
    close: () => new Promise(resolve => { http.closeAllConnections(); http.close(() => resolve()) }),
  }
}

interface HttpState { requests: number; down: boolean; options: HttpMcpServerOptions; calls: McpCallRecord[] }

async function handleHttp(req: IncomingMessage, res: ServerResponse, state: HttpState): Promise<void> {
  state.requests++
  if (state.down) {
    req.socket.destroy()
    return
  }
  const { token, downAfterList, onCall } = state.options
  if (token !== undefined && req.headers.authorization !== `Bearer ${token}`) {
    res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }))
    return
  }
  const server = createTestMcpServer((record) => { state.calls.push(record); onCall?.(record) }, () => { if (downAfterList) setImmediate(() => { state.down = true }) })
  // No session id generator: the stateless mode, one server and transport per request.
  const transport = new StreamableHTTPServerTransport({})
  res.on('close', () => { void transport.close(); void server.close() })
  await server.connect(transport)
  await transport.handleRequest(req, res)
}

import { createServer } from 'node:http'
import type { IncomingMessage, Server as HttpServer, ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { createTestMcpServer } from './test-mcp-server'
import type { McpCallRecord } from './test-mcp-server'

/** A Streamable HTTP server of the test tools (stateless: a server per request), refusing requests without `Bearer token`. */
export interface HttpMcpServer { url: string; calls: McpCallRecord[]; requests: number; close(): Promise<void> }

/** Starts the test tools over Streamable HTTP on a free port of 127.0.0.1. */
export async function startHttpMcpServer(options: { token?: string } = {}): Promise<HttpMcpServer> {
  const calls: McpCallRecord[] = []
  const state = { requests: 0 }
  const http: HttpServer = createServer((req, res) => { handleHttp(req, res, options.token, calls, state).catch(() => res.destroy()) })
  await new Promise<void>(resolve => http.listen(0, '127.0.0.1', resolve))
  const { port } = http.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    get requests() { return state.requests },
    close: () => new Promise(resolve => { http.closeAllConnections(); http.close(() => resolve()) }),
  }
}

async function handleHttp(req: IncomingMessage, res: ServerResponse, token: string | undefined, calls: McpCallRecord[], state: { requests: number }): Promise<void> {
  state.requests++
  if (token !== undefined && req.headers.authorization !== `Bearer ${token}`) {
    res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unauthorized' }))
    return
  }
  const server = createTestMcpServer(record => calls.push(record))
  // No session id generator: the stateless mode, one server and transport per request.
  const transport = new StreamableHTTPServerTransport({})
  res.on('close', () => { void transport.close(); void server.close() })
  await server.connect(transport)
  await transport.handleRequest(req, res)
}

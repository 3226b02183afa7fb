import { appendFileSync, readFileSync } from 'node:fs'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'

// A test MCP server: self-contained (no relative import), so its types can be stripped and the stripped copy run
// inside the sandbox as a stdio server (`--stdio`); `http-mcp-server.ts` serves the same tools over Streamable HTTP.
// It imports nothing of the SDK's HTTP side: that loads undici, whose WebAssembly does not fit the sandbox's memory.

/** One `tools/call` the server received: its tool and the idempotency key in `_meta` (null without one). */
export interface McpCallRecord { tool: string; key: string | null; at: number }

const IDEMPOTENCY_KEY = 'io.zidane/idempotency-key'
const PIXEL = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='

const TOOLS = [
  { name: 'echo', description: 'Returns its text.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, annotations: { readOnlyHint: true } },
  { name: 'record', description: 'Records one call (an effect that must not repeat), after delayMs.', inputSchema: { type: 'object', properties: { note: { type: 'string' }, delayMs: { type: 'number' } } } },
  { name: 'picture', description: 'Returns an image, an embedded resource and a resource link.', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } },
  { name: 'big', description: 'Returns 300 KiB of text.', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } },
  { name: 'read_path', description: 'Reads a file by absolute path.', inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }, annotations: { readOnlyHint: true } },
  { name: 'confirm', description: 'Asks its user (elicitation) and returns the answer.', inputSchema: { type: 'object', properties: { question: { type: 'string' } }, required: ['question'] } },
  { name: 'whoami', description: 'Says whether the secret variable MCP_TEST_SECRET is set, and which variables it sees.', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } },
]

type Reply = { content: Record<string, unknown>[]; isError?: boolean }

/** An MCP server with the test tools; `onCall` sees every `tools/call` before it runs, `onList` every `tools/list`. */
export function createTestMcpServer(onCall: (record: McpCallRecord) => void, onList: () => void = () => undefined): Server {
  const server = new Server({ name: 'zidane-test', version: '1.0.0' }, { capabilities: { tools: {} } })
  server.setRequestHandler(ListToolsRequestSchema, () => {
    onList()
    return { tools: TOOLS }
  })
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<Reply> => {
    const key = request.params._meta?.[IDEMPOTENCY_KEY]
    onCall({ tool: request.params.name, key: typeof key === 'string' ? key : null, at: Date.now() })
    if (request.params.name === 'confirm') {
      const answer = await server.elicitInput({ message: String(request.params.arguments?.question), requestedSchema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] } })
      return { content: [{ type: 'text', text: `confirmed: ${answer.action} ${JSON.stringify(answer.content ?? null)}` }] }
    }
    return runTool(request.params.name, request.params.arguments ?? {})
  })
  return server
}

async function runTool(name: string, input: Record<string, unknown>): Promise<Reply> {
  const text = (value: string): Reply => ({ content: [{ type: 'text', text: value }] })
  if (name === 'echo') return text(`echo: ${String(input.text)}`)
  if (name === 'record') {
    await new Promise(resolve => setTimeout(resolve, Number(input.delayMs ?? 0)))
    return text(`recorded ${String(input.note ?? '')}`)
  }
  if (name === 'picture') return { content: [{ type: 'image', data: PIXEL, mimeType: 'image/png' }, { type: 'resource', resource: { uri: 'test://notes.txt', mimeType: 'text/plain', text: 'the notes' } }, { type: 'resource_link', uri: 'test://other', name: 'other' }] }
  if (name === 'big') return text('x'.repeat(300 * 1024))
  if (name === 'read_path') {
    try {
      return text(readFileSync(String(input.path), 'utf8'))
    } catch (error) {
      return { ...text(`cannot read: ${(error as NodeJS.ErrnoException).code ?? 'error'}`), isError: true }
    }
  }
  if (name === 'whoami') return text(`secret ${process.env.MCP_TEST_SECRET ? `set (${process.env.MCP_TEST_SECRET.length} characters)` : 'unset'}; variables ${Object.keys(process.env).sort().join(',')}`)
  return { ...text(`unknown tool ${name}`), isError: true }
}

/** Serves the test tools on standard input and output, appending each call to `mcp-calls.jsonl` in the working folder. */
async function serveStdio(): Promise<void> {
  const server = createTestMcpServer(record => appendFileSync('mcp-calls.jsonl', `${JSON.stringify(record)}\n`))
  await server.connect(new StdioServerTransport())
}

if (process.argv[2] === '--stdio') void serveStdio()

import { mkdtemp, readdir, realpath, rm, stat } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgent } from 'zidane'
import { demoProvider } from 'zidane/providers'
import { createMcpConnector, createMcpTools, elicitResult, listMcpTools, MCP_IDEMPOTENCY_META_KEY, mcpToolName, parseMcpServers } from '../../../src/tools/mcp'
import type { McpServerConfig } from '../../../src/tools/mcp'
import { startHttpMcpServer } from '../../../support/mcp-server/http-mcp-server'
import type { HttpMcpServer } from '../../../support/mcp-server/http-mcp-server'
import { createToolContext, runTool } from '../builtin/tool-context'

const TOKEN = 'tok-3f9a1c77e2b04d5e'
let server: HttpMcpServer
let workspace: string

beforeAll(async () => {
  server = await startHttpMcpServer({ token: TOKEN })
  workspace = await realpath(await mkdtemp(path.join(os.tmpdir(), 'zidane-mcp-')))
})
afterAll(async () => {
  await server.close()
  await rm(workspace, { recursive: true, force: true })
})

const httpServer = (overrides: Partial<McpServerConfig> = {}): McpServerConfig => ({ name: 'files', transport: 'http', url: server.url, headers: { Authorization: 'Bearer ${MCP_TOKEN}' }, ...overrides })

describe('MCP tools over Streamable HTTP', () => {
  const env = { MCP_TOKEN: TOKEN }

  it('lists the tools prefixed with the server name, read-only ones marked, no credential in the list', async () => {
    const connector = createMcpConnector({ env })
    const list = await listMcpTools([httpServer()], connector, { workspace })
    await connector.closeAll()
    expect(list.failures).toEqual([])
    expect(list.tools.map(tool => [tool.name, tool.readOnly])).toEqual([['files__echo', true], ['files__record', false], ['files__picture', true], ['files__big', true], ['files__read_path', true], ['files__confirm', false], ['files__whoami', true]])
    expect(JSON.stringify(list)).not.toContain(TOKEN)
  })

  it('calls a tool with the run id and call id as its idempotency key; unsafe tools are not replay-safe', async () => {
    const connector = createMcpConnector({ env })
    const servers = [httpServer()]
    const tools = createMcpTools(await listMcpTools(servers, connector, { workspace }), servers, connector, { workspace })
    const record = tools.find(tool => tool.spec.name === 'files__record')!
    expect(record.replay).toBeUndefined()
    expect(tools.find(tool => tool.spec.name === 'files__echo')!.replay).toBe('safe')
    const result = await runTool(record, { note: 'n1' }, createToolContext({ runId: 'run-7', callId: 'toolu_9' }))
    await connector.closeAll()
    expect(result).toEqual({ content: 'recorded n1' })
    expect(server.calls.at(-1)).toMatchObject({ tool: 'record', key: 'run-7:toolu_9' })
    expect(MCP_IDEMPOTENCY_META_KEY).toBe('io.zidane/idempotency-key')
  })

  it('maps images, embedded resources and resource links', async () => {
    const connector = createMcpConnector({ env })
    const servers = [httpServer()]
    const tools = createMcpTools(await listMcpTools(servers, connector, { workspace }), servers, connector, { workspace })
    const result = await runTool(tools.find(tool => tool.spec.name === 'files__picture')!, {})
    await connector.closeAll()
    expect(result.content).toEqual([
      { type: 'image', mediaType: 'image/png', data: expect.any(String) },
      { type: 'text', text: '[resource test://notes.txt (text/plain)]\nthe notes' },
      { type: 'text', text: '[resource other test://other]' },
    ])
  })

  it('a wrong or missing credential fails the listing without naming the token', async () => {
    const connector = createMcpConnector({ env: { MCP_TOKEN: 'wrong-token-123' } })
    const list = await listMcpTools([httpServer()], connector, { workspace })
    expect(list.tools).toEqual([])
    expect(list.failures[0]?.message).toMatch(/cannot connect to the MCP server "files"/)
    expect(list.failures[0]?.message).not.toContain('wrong-token-123')
    const missing = await listMcpTools([httpServer()], createMcpConnector({ env: {} }), { workspace })
    expect(missing.failures[0]?.message).toMatch(/MCP_TOKEN the MCP configuration names is not set/)
  })

  it('a server that went down gives the call a tool error within its timeout', async () => {
    const down = await startHttpMcpServer()
    const connector = createMcpConnector({ env })
    const servers = [{ name: 'gone', transport: 'http' as const, url: down.url, connectTimeoutMs: 2000, callTimeoutMs: 2000 }]
    const tools = createMcpTools(await listMcpTools(servers, connector, { workspace }), servers, connector, { workspace })
    await connector.closeAll()
    await down.close()
    const started = Date.now()
    await expect(runTool(tools[0]!, { text: 'hi' })).rejects.toThrow(/The MCP tool gone__echo failed: cannot connect/)
    expect(Date.now() - started).toBeLessThan(5000)
  })
})

describe('the demo model and an MCP server', () => {
  it('calls an MCP tool through the loop with the mcp: directive', async () => {
    const connector = createMcpConnector({ env: { MCP_TOKEN: TOKEN } })
    const servers = [httpServer()]
    const tools = createMcpTools(await listMcpTools(servers, connector, { workspace }), servers, connector, { workspace })
    const stats = await createAgent({ provider: demoProvider(), tools }).run({ prompt: 'mcp: files echo {"text":"over  mcp"}' })
    await connector.closeAll()
    expect(stats.status).toBe('completed')
    expect(stats.text).toContain('echo: over  mcp')
  })
})

describe('large MCP outputs', () => {
  it('are persisted like any tool output past the threshold', async () => {
    const connector = createMcpConnector({ env: { MCP_TOKEN: TOKEN } })
    const servers = [httpServer()]
    const tools = createMcpTools(await listMcpTools(servers, connector, { workspace }), servers, connector, { workspace })
    const agent = createAgent({ provider: demoProvider(), tools, sessionId: 'big-session', behavior: { persistDir: workspace } })
    const stats = await agent.run({ prompt: 'mcp: files big' })
    await connector.closeAll()
    expect(stats.status).toBe('completed')
    const persisted = await readdir(path.join(workspace, 'big-session', 'tool-results'))
    expect(persisted).toHaveLength(1)
    expect((await stat(path.join(workspace, 'big-session', 'tool-results', persisted[0]!))).size).toBe(300 * 1024)
  })
})

describe('elicitResult', () => {
  const one = { type: 'object', properties: { answer: { type: 'string' } } }
  const two = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'string' } } }
  it('accepts an object or its JSON text, fills a single field with text, declines or cancels when told', () => {
    expect(elicitResult({ a: '1', b: '2' }, two)).toEqual({ action: 'accept', content: { a: '1', b: '2' } })
    expect(elicitResult('{"answer":"yes"}', one)).toEqual({ action: 'accept', content: { answer: 'yes' } })
    expect(elicitResult('yes', one)).toEqual({ action: 'accept', content: { answer: 'yes' } })
    expect(elicitResult('yes', two)).toEqual({ action: 'decline' })
    expect(elicitResult('decline', one)).toEqual({ action: 'decline' })
    expect(elicitResult('cancel', one)).toEqual({ action: 'cancel' })
  })
})

describe('MCP configuration', () => {
  it('parses a list, refuses bad names and duplicates', () => {
    expect(parseMcpServers('[{"name":"a","transport":"http","url":"http://x"}]', 'ZIDANE_MCP_SERVERS')).toHaveLength(1)
    expect(parseMcpServers('{"servers":[{"name":"a","transport":"stdio","command":"x"}]}', 'f')).toHaveLength(1)
    expect(() => parseMcpServers('[{"name":"a b","transport":"http","url":"u"}]', 'S')).toThrow(/"name" must be/)
    expect(() => parseMcpServers('[{"name":"a","transport":"http","url":"u"},{"name":"a","transport":"http","url":"u"}]', 'S')).toThrow(/two servers/)
    expect(() => parseMcpServers('[{"name":"a","transport":"stdio"}]', 'S')).toThrow(/needs a "command"/)
  })

  it('names stay within the model API charset and 64 characters, and unique', () => {
    expect(mcpToolName('github', 'create_issue')).toBe('github__create_issue')
    expect(mcpToolName('gh', 'repo.list')).toMatch(/^gh__repo_list_[0-9a-f]{8}$/)
    const long = mcpToolName('server', 'x'.repeat(80))
    expect(long).toHaveLength(64)
    expect(long).not.toBe(mcpToolName('server', `${'x'.repeat(79)}y`))
  })
})

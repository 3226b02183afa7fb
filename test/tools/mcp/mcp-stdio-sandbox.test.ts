import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { realpathSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { bubblewrapSandbox, isSandboxUsable } from '../../../src/tools/builtin/command-sandbox'
import { createMcpConnector, createMcpTools, listMcpTools } from '../../../src/tools/mcp'
import type { McpServerConfig } from '../../../src/tools/mcp'
import { REPOSITORY_MODULES, testMcpServerEntry } from '../../../support/mcp-server/stdio-entry'
import { createToolContext, runTool } from '../builtin/tool-context'

const SECRET = 'stdio-secret-5be1d0c2'
let root: string
let sandbox: ReturnType<typeof bubblewrapSandbox>
let usable = false
let entry: string

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'zidane-mcp-stdio-')))
  await mkdir(path.join(root, 'alice'), { recursive: true })
  await mkdir(path.join(root, 'bob'), { recursive: true })
  await writeFile(path.join(root, 'bob', 'private.txt'), 'bob only')
  sandbox = bubblewrapSandbox({ cgroupName: `zidane-test-${process.pid}` })
  usable = isSandboxUsable(sandbox, path.join(root, 'alice'))
  entry = testMcpServerEntry()
})
afterAll(async () => {
  await rm(root, { recursive: true, force: true })
  await rm(entry, { force: true })
})

function stdioServer(): McpServerConfig {
  const node = realpathSync(process.execPath)
  return {
    name: 'local',
    transport: 'stdio',
    command: `exec '${node}' '${entry}' --stdio`,
    env: { MCP_TEST_SECRET: '${SECRET_FOR_MCP}' },
    readOnlyPaths: [node, REPOSITORY_MODULES],
  }
}

describe('a stdio MCP server in the sandbox', () => {
  it('runs in the session workspace with only the named environment, and cannot read another tenant workspace', async (context) => {
    if (!usable) context.skip()
    const alice = path.join(root, 'alice')
    const connector = createMcpConnector({ env: { SECRET_FOR_MCP: SECRET, PATH: process.env.PATH }, sandbox })
    const servers = [stdioServer()]
    const scope = { workspace: alice, tenant: 'alice' }
    try {
      const list = await listMcpTools(servers, connector, scope)
      expect(list.failures).toEqual([])
      const tools = createMcpTools(list, servers, connector, scope)
      const tool = (name: string) => tools.find(candidate => candidate.spec.name === `local__${name}`)!
      const whoami = await runTool(tool('whoami'), {})
      expect(whoami.content).toBe('secret set (21 characters); variables HOME,LANG,MCP_TEST_SECRET,PATH,PWD,SHLVL,TERM')
      expect(JSON.stringify(whoami)).not.toContain(SECRET)
      const stolen = await runTool(tool('read_path'), { path: path.join(root, 'bob', 'private.txt') })
      expect(stolen).toEqual({ content: 'cannot read: ENOENT', isError: true })
      await runTool(tool('record'), { note: 'x' }, createToolContext({ runId: 'r1', callId: 'c1' }))
      const ledger = await readFile(path.join(alice, 'mcp-calls.jsonl'), 'utf8')
      expect(ledger).toContain('"key":"r1:c1"')
    } finally {
      await connector.closeAll()
    }
  }, 60_000)

  it('is refused, as a listing failure, where the sandbox is required but not usable', async () => {
    const list = await listMcpTools([stdioServer()], createMcpConnector({ sandbox: 'refuse' }), { workspace: root })
    expect(list.failures[0]?.message).toMatch(/stdio servers run only inside the sandbox/)
  })
})

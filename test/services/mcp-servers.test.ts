import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { createMcpOffer, mcpSettings } from '../../services/mcp-servers'
import type { ShellPolicy } from '../../services/shell-policy'

const unsandboxed: ShellPolicy = { status: { mode: 'unsandboxed' }, options: {} } as unknown as ShellPolicy
const http = (name: string): Record<string, string> => ({ name, transport: 'http', url: 'http://127.0.0.1:1/mcp' })

describe('createMcpOffer', () => {
  it('reads ZIDANE_MCP_SERVERS and the ZIDANE_MCP_CONFIG file together', async () => {
    const folder = await mkdtemp(path.join(os.tmpdir(), 'zidane-mcp-config-'))
    try {
      const file = path.join(folder, 'mcp.json')
      await writeFile(file, JSON.stringify({ servers: [http('b')] }))
      const offer = createMcpOffer({ ZIDANE_MCP_SERVERS: JSON.stringify([http('a')]), ZIDANE_MCP_CONFIG: file }, unsandboxed)
      expect(offer.servers.map(server => server.name)).toEqual(['a', 'b'])
      expect(() => createMcpOffer({ ZIDANE_MCP_SERVERS: JSON.stringify([http('a')]), ZIDANE_MCP_CONFIG: file.replace('mcp.json', 'a.json') }, unsandboxed)).toThrow(/ZIDANE_MCP_CONFIG: cannot read/)
      await writeFile(file, JSON.stringify([http('a')]))
      expect(() => createMcpOffer({ ZIDANE_MCP_SERVERS: JSON.stringify([http('a')]), ZIDANE_MCP_CONFIG: file }, unsandboxed)).toThrow(/two MCP servers are named "a"/)
    } finally {
      await rm(folder, { recursive: true, force: true })
    }
  })

  it('offers no server without configuration, and refuses invalid JSON at start', () => {
    expect(createMcpOffer({}, unsandboxed).servers).toEqual([])
    expect(() => createMcpOffer({ ZIDANE_MCP_SERVERS: '[{' }, unsandboxed)).toThrow(/ZIDANE_MCP_SERVERS is not valid JSON/)
  })

  it('journals the names of the tenant servers in the run settings, nothing without one', () => {
    const offer = createMcpOffer({ ZIDANE_MCP_SERVERS: JSON.stringify([http('all'), { ...http('mine'), tenants: ['t1'] }]) }, unsandboxed)
    expect(mcpSettings(offer, 't1')).toEqual({ mcpServers: ['all', 'mine'] })
    expect(mcpSettings(offer, 't2')).toEqual({ mcpServers: ['all'] })
    expect(mcpSettings(createMcpOffer({}, unsandboxed), 't1')).toEqual({})
  })
})

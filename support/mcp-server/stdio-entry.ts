import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { stripTypeScriptTypes } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const SOURCE = fileURLToPath(new URL('./test-mcp-server.ts', import.meta.url))
/** The repository's `node_modules`: the stripped server resolves the MCP SDK there, and a sandbox must bind it. */
export const REPOSITORY_MODULES = fileURLToPath(new URL('../../node_modules', import.meta.url))

/**
 * The test MCP server as plain JavaScript, written once below `node_modules/.cache` (so its imports resolve to the
 * repository's packages): what a stdio server configuration runs with `node <entry> --stdio`. Node's own type
 * stripping needs more address space than the sandbox's limit allows, so it is stripped here.
 */
export function testMcpServerEntry(): string {
  const folder = path.join(REPOSITORY_MODULES, '.cache', 'zidane-test-mcp-server')
  mkdirSync(folder, { recursive: true })
  const entry = path.join(folder, `server-${process.pid}.mjs`)
  const emitWarning = process.emitWarning.bind(process)
  process.emitWarning = () => undefined
  try {
    writeFileSync(entry, stripTypeScriptTypes(readFileSync(SOURCE, 'utf8'), { mode: 'strip' }))
  } finally {
    process.emitWarning = emitWarning
  }
  return entry
}

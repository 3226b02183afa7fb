import { describe, expect, it } from 'vitest'
import type { ToolDef } from '../../src/tools/tool'
import { shellPolicy } from '../../services/shell-policy'
import { selectTools } from '../../services/tool-selection'

const tool = (name: string): ToolDef => ({ spec: { name, description: name, inputSchema: { type: 'object' } }, execute: async () => name })
const names = (tools: ToolDef[]): string[] => tools.map(each => each.spec.name)
const all = ['read_file', 'write_file', 'shell', 'spawn'].map(tool)

describe('operator control of the tools', () => {
  it('keeps every tool by default', () => {
    expect(names(selectTools(all, { ZIDANE_SANDBOX: 'off' }))).toEqual(['read_file', 'write_file', 'shell', 'spawn'])
  })

  it('keeps only ZIDANE_TOOLS, minus ZIDANE_DISABLE_TOOLS', () => {
    expect(names(selectTools(all, { ZIDANE_TOOLS: 'read_file, shell', ZIDANE_SANDBOX: 'off' }))).toEqual(['read_file', 'shell'])
    expect(names(selectTools(all, { ZIDANE_DISABLE_TOOLS: 'shell,spawn' }))).toEqual(['read_file', 'write_file'])
    expect(shellPolicy({ ZIDANE_DISABLE_TOOLS: 'shell' }).status.mode).toBe('disabled')
  })

  it('drops shell when the sandbox is required but not usable, and runs it unsandboxed when not required', () => {
    const missing = { ZIDANE_SANDBOX_BWRAP: '/nonexistent/bwrap' }
    expect(names(selectTools(all, { ...missing, ZIDANE_SANDBOX: 'required' }))).toEqual(['read_file', 'write_file', 'spawn'])
    expect(shellPolicy({ ...missing, ZIDANE_SANDBOX: 'required' }).status.reason).toContain('/nonexistent/bwrap')
    expect(shellPolicy(missing).status.mode).toBe('unsandboxed')
    expect(shellPolicy({ ZIDANE_SANDBOX: 'required' }).status.mode).toBe('sandboxed')
  })
})

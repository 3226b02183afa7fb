import { describe, expect, it } from 'vitest'
import { validateToolInput } from '../../../src/agent/input-validator'
import { createBuiltinTools } from '../../../src/tools/builtin/create-builtin-tools'
import type { ToolDef } from '../../../src/tools/tool'
import { useSandbox } from './tool-context'

const FILE_TOOLS = ['read_file', 'list_files', 'glob', 'grep', 'write_file', 'edit_file']

describe('the file tools\' input schemas', () => {
  const folders = useSandbox()

  it('are one object per tool across runs, so each run does not compile (and keep) its own validator', () => {
    const byName = (tools: ToolDef[]): Map<string, ToolDef> => new Map(tools.map(tool => [tool.spec.name, tool]))
    const first = byName(createBuiltinTools({ root: folders.root }))
    const second = byName(createBuiltinTools({ root: folders.outside }))
    for (const name of FILE_TOOLS) expect(second.get(name)?.spec.inputSchema, name).toBe(first.get(name)?.spec.inputSchema)
    const write = second.get('write_file') as ToolDef
    expect(validateToolInput(write, { path: 'a.txt', content: 'x' })).toBeUndefined()
    expect(validateToolInput(write, { path: 'a.txt' })).toContain('content')
  })
})

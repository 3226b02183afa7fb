import { readFile } from 'node:fs/promises'
import { beforeEach, describe, expect, it } from 'vitest'
import { Ajv } from 'ajv'
import { createBuiltinTools } from '../../../src/tools/builtin/create-builtin-tools'
import type { ToolDef } from '../../../src/tools/tool'
import { createToolContext, runTool, textOf, useSandbox } from './tool-context'

describe('createBuiltinTools', () => {
  const sandbox = useSandbox()
  let tools: ToolDef[]
  const byName = (name: string): ToolDef => {
    const tool = tools.find(candidate => candidate.spec.name === name)
    if (tool === undefined) throw new Error(`missing tool ${name}`)
    return tool
  }

  beforeEach(() => {
    tools = createBuiltinTools({ root: sandbox.root, shell: { timeoutMs: 5000 } })
  })

  it('returns the nine tools, with replay and concurrency flags only on the read-only ones', () => {
    const flags = Object.fromEntries(tools.map(tool => [tool.spec.name, [tool.replay ?? null, tool.isConcurrencySafe === true]]))
    expect(flags).toEqual({
      read_file: ['safe', true],
      list_files: ['safe', true],
      glob: ['safe', true],
      grep: ['safe', true],
      todoread: ['safe', true],
      write_file: [null, false],
      edit_file: [null, false],
      shell: [null, false],
      todowrite: [null, false],
    })
  })

  it('gives every tool a strict object JSON schema that compiles', () => {
    const ajv = new Ajv({ strict: true })
    for (const tool of tools) {
      expect(tool.spec.inputSchema).toMatchObject({ type: 'object', additionalProperties: false })
      expect(tool.spec.inputSchema.required).toBeInstanceOf(Array)
      expect(() => ajv.compile(tool.spec.inputSchema)).not.toThrow()
      expect(tool.spec.description.length).toBeGreaterThan(10)
    }
  })

  it('confines the tools to one root and shares the todo list between todowrite and todoread', async () => {
    const { toolState: _unused, ...context } = createToolContext()
    await runTool(byName('write_file'), { path: 'hello.txt', content: 'hi' }, context)
    expect(await readFile(`${sandbox.root}/hello.txt`, 'utf8')).toBe('hi')
    expect(textOf((await runTool(byName('shell'), { command: 'cat hello.txt' }, context)).content)).toContain('hi')
    await runTool(byName('todowrite'), { todos: [{ content: 'ship', status: 'pending' }] }, context)
    expect(textOf((await runTool(byName('todoread'), {}, context)).content)).toBe('1. [pending] ship')
  })
})

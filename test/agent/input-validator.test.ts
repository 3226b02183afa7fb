import { Ajv } from 'ajv'
import { describe, expect, it } from 'vitest'
import { createToolInputValidator } from '../../src/agent/input-validator'
import type { ToolDef } from '../../src/tools/tool'

/** A tool made anew, as the services make a run's tools per invocation: a fresh schema object each time. */
function freshTool(schemaId?: string): ToolDef {
  return {
    spec: { name: 'echo', description: 'echoes', inputSchema: { ...(schemaId ? { $id: schemaId } : {}), type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } },
    execute: async () => 'ok',
  }
}

describe('tool input validation', () => {
  it('compiles a schema once however many tools carry it, and leaves nothing of them in Ajv', () => {
    const ajv = new Ajv({ allErrors: true, strict: false })
    const cached = (): number => (ajv as unknown as { _cache: Map<unknown, unknown> })._cache.size
    const before = cached() // its own meta-schemas
    const validator = createToolInputValidator(ajv)
    for (let run = 0; run < 500; run++) {
      const tool = freshTool()
      expect(validator.validate(tool, { text: 'hi' })).toBeUndefined()
      expect(validator.validate(tool, {})).toContain('text')
    }
    expect(validator.size()).toBe(1)
    // Ajv keeps every schema object it compiled unless told to forget it: one per run before.
    expect(cached()).toBe(before)
  })

  it('validates a schema with an $id in every run: a second object with the same $id does not throw', () => {
    const validator = createToolInputValidator()
    for (let run = 0; run < 3; run++) expect(validator.validate(freshTool('https://tools.example/echo'), { text: 'hi' })).toBeUndefined()
  })
})

describe('tool input validation across tools of different servers', () => {
  /** A tool whose schema holds a nested `$id` (as an MCP server's schema may), referenced from its properties. */
  function toolWithNestedId(name: string, nestedId: string): ToolDef {
    return {
      spec: { name, description: 'nested', inputSchema: { type: 'object', properties: { item: { $ref: nestedId } }, required: ['item'], $defs: { shared: { $id: nestedId, type: 'string' } } } },
      execute: async () => 'ok',
    }
  }

  it('keeps one tool\'s nested $id from breaking another tool whose schema has that $id', () => {
    const validator = createToolInputValidator()
    const first = toolWithNestedId('first', 'https://example.com/shared.json')
    expect(validator.validate(first, { item: 'a' })).toBeUndefined()
    expect(validator.validate(first, { item: 1 })).toContain('string')
    const second: ToolDef = { spec: { name: 'second', description: 'owns the id', inputSchema: { $id: 'https://example.com/shared.json', type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } }, execute: async () => 'ok' }
    expect(validator.validate(second, { n: 1 })).toBeUndefined()
    expect(validator.validate(second, {})).toContain('n')
    // The same nested id in a schema of another shape (another server's tool) compiles too, with its own meaning.
    const third: ToolDef = { spec: { name: 'third', description: 'other shape', inputSchema: { type: 'object', properties: { item: { $ref: 'https://example.com/shared.json' } }, required: ['item'], $defs: { shared: { $id: 'https://example.com/shared.json', type: 'number' } } } }, execute: async () => 'ok' }
    expect(validator.validate(third, { item: 2 })).toBeUndefined()
    expect(validator.validate(third, { item: 'a' })).toContain('number')
  })
})

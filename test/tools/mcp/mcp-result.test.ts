import { describe, expect, it } from 'vitest'
import { mcpResultToToolResult } from '../../../src/tools/mcp'

describe('mcpResultToToolResult', () => {
  it('one text block is a string; an error stays an error', () => {
    expect(mcpResultToToolResult({ content: [{ type: 'text', text: 'hi' }] })).toEqual({ content: 'hi' })
    expect(mcpResultToToolResult({ content: [{ type: 'text', text: 'no' }], isError: true })).toEqual({ content: 'no', isError: true })
  })

  it('structured content without content is JSON text; nothing at all is empty text', () => {
    expect(mcpResultToToolResult({ structuredContent: { a: 1 } })).toEqual({ content: '{"a":1}' })
    expect(mcpResultToToolResult({ content: [] })).toEqual({ content: '' })
  })

  it('audio, binary resources and unknown blocks are named, not inlined; image blobs become images', () => {
    const result = mcpResultToToolResult({ content: [
      { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
      { type: 'resource', resource: { uri: 'x://bin', mimeType: 'application/zip', blob: 'AAAAAAAA' } },
      { type: 'resource', resource: { uri: 'x://img', mimeType: 'image/png', blob: 'iVBO' } },
      { type: 'hologram' },
    ] })
    expect(result.content).toEqual([
      { type: 'text', text: '[audio audio/wav: 3 bytes, not shown]' },
      { type: 'text', text: '[resource x://bin (application/zip): 6 bytes of binary content, not shown]' },
      { type: 'text', text: '[resource x://img (image/png)]' },
      { type: 'image', mediaType: 'image/png', data: 'iVBO' },
      { type: 'text', text: '[hologram content, not shown]' },
    ])
  })
})

import { describe, expect, it } from 'vitest'
import { createOutputBuffer } from '../../../src/tools/builtin/output-buffer'

describe('createOutputBuffer', () => {
  it('returns everything when the output fits', () => {
    const buffer = createOutputBuffer(10)
    buffer.append(Buffer.from('hello'))
    buffer.append(Buffer.from('world'))
    expect(buffer.text()).toBe('helloworld')
  })

  it('keeps the head and the tail with an omitted-bytes marker past the cap', () => {
    const buffer = createOutputBuffer(10)
    for (const chunk of ['abc', 'def', 'ghi', 'jkl', 'mno', 'pqr']) buffer.append(Buffer.from(chunk))
    expect(buffer.text()).toBe('abcde\n[… 8 bytes omitted …]\nnopqr')
    expect(buffer.totalBytes).toBe(18)
  })
})

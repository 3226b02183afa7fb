import { describe, expect, it } from 'vitest'
import { copyData } from '../../src/durable/copy-data'

describe('copyData', () => {
  it('copies plain data deeply: changing the copy leaves the original as it was', () => {
    const turn = { id: 't1', content: [{ type: 'tool_use', input: { path: ['a', 'b'] } }], createdAt: 1, note: undefined }
    const copy = copyData(turn)
    expect(copy).toEqual(turn)
    expect(Object.hasOwn(copy, 'note')).toBe(true)
    copy.content[0]!.input.path.push('c')
    copy.content.push({ type: 'text', input: { path: [] } })
    expect(turn.content).toEqual([{ type: 'tool_use', input: { path: ['a', 'b'] } }])
  })

  it('copies what is not plain data as structuredClone does', () => {
    const value = { at: new Date(5), tags: new Map([['a', 1]]) }
    const copy = copyData(value)
    expect(copy.at).not.toBe(value.at)
    expect(copy.at.getTime()).toBe(5)
    expect(copy.tags.get('a')).toBe(1)
    expect(copyData(null)).toBeNull()
    expect(copyData('text')).toBe('text')
  })

  it('keeps an own __proto__ key as a key, without touching the copy\'s prototype', () => {
    const input = JSON.parse('{"tool":"x","__proto__":{"isAdmin":true}}') as Record<string, unknown>
    const copy = copyData(input)
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect((copy as { isAdmin?: boolean }).isAdmin).toBeUndefined()
    expect(JSON.stringify(copy)).toBe(JSON.stringify(input))
  })
})

import { describe, expect, it } from 'vitest'

describe('toolchain', () => {
  it('runs the tests on Node 22', () => {
    expect(process.versions.node.split('.')[0]).toBe('22')
  })
})

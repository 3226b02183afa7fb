import { describe, expect, it } from 'vitest'
import { compileGlob } from '../../../../src/tools/builtin/file-worker/compile-glob'

const matches = (pattern: string, candidate: string): boolean => compileGlob(pattern).test(candidate)

describe('compileGlob', () => {
  it('matches * within one path segment only', () => {
    expect(matches('*.ts', 'a.ts')).toBe(true)
    expect(matches('*.ts', 'src/a.ts')).toBe(false)
    expect(matches('src/*.ts', 'src/a.ts')).toBe(true)
  })

  it('matches ** across any number of segments, including none', () => {
    expect(matches('**/*.ts', 'a.ts')).toBe(true)
    expect(matches('**/*.ts', 'src/deep/a.ts')).toBe(true)
    expect(matches('src/**/a.ts', 'src/a.ts')).toBe(true)
    expect(matches('src/**/a.ts', 'src/x/y/a.ts')).toBe(true)
    expect(matches('src/**', 'src/x/y/a.ts')).toBe(true)
    expect(matches('**', 'any/thing')).toBe(true)
  })

  it('matches ? as exactly one character other than /', () => {
    expect(matches('a?c', 'abc')).toBe(true)
    expect(matches('a?c', 'ac')).toBe(false)
    expect(matches('a?c', 'a/c')).toBe(false)
  })

  it('matches {a,b} alternatives, nested and with wildcards', () => {
    expect(matches('*.{ts,tsx}', 'a.tsx')).toBe(true)
    expect(matches('*.{ts,tsx}', 'a.js')).toBe(false)
    expect(matches('{src,test/{unit,e2e}}/*.ts', 'test/e2e/a.ts')).toBe(true)
    expect(matches('{src/**/*,lib}.ts', 'src/x/a.ts')).toBe(true)
  })

  it('treats regex characters and unbalanced braces literally', () => {
    expect(matches('a+b(1).ts', 'a+b(1).ts')).toBe(true)
    expect(matches('a.ts', 'abts')).toBe(false)
    expect(matches('{a', '{a')).toBe(true)
    expect(matches('\\*.ts', '*.ts')).toBe(true)
    expect(matches('\\*.ts', 'a.ts')).toBe(false)
  })
})

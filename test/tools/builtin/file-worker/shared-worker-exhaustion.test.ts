import { execFileSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createFileWorker } from '../../../../src/tools/builtin/file-worker-client'
import type { FileOperation, FileWorker } from '../../../../src/tools/builtin/file-worker-client'
import { createFileWorkerPool } from '../../../../src/tools/builtin/file-worker-pool'
import type { FileWorkerPool } from '../../../../src/tools/builtin/file-worker-pool'
import { sandboxModes, useSandbox } from '../tool-context'
import { outcome, SECRET, twoSessionTenant } from './two-session-tenant'

/**
 * Session `s1` of tenant `acme` tries to wear down the file worker it shares with its sibling `s2` (one warm worker
 * per tenant folder): run it out of descriptors, out of memory, past its time limit. Each attack may fail s1's own
 * call; none may fail, slow past its own bound, or leak into s2's calls, nor leave the worker damaged for them.
 */

const modes = sandboxModes()

describe.each(modes)('a file worker shared by a tenant\'s sessions, worn down by one of them, %s', (_mode, sandbox) => {
  const folders = useSandbox()
  let tenant: string
  let s1: string
  let s2: string
  let pool: FileWorkerPool
  let groups: Array<number | undefined>
  let one: FileWorker
  let two: FileWorker

  beforeEach(async () => {
    ;({ tenant, s1, s2 } = await twoSessionTenant(folders.root))
    groups = []
    // One worker for the whole tenant: every call of both sessions goes to the same process.
    pool = createFileWorkerPool({ maxWorkersPerScope: 1, onWorkerStart: group => groups.push(group) })
    one = createFileWorker(s1, { tenant: 'acme', confineTo: tenant, pool, timeoutMs: 8_000, ...(sandbox ? { sandbox } : {}) })
    two = createFileWorker(s2, { tenant: 'acme', confineTo: tenant, pool, timeoutMs: 8_000, ...(sandbox ? { sandbox } : {}) })
  })

  afterEach(() => pool.close())

  it('gives every descriptor back when a path deeper than the descriptor limit hits EMFILE, and serves the sibling next', async () => {
    expect(await outcome(two, { op: 'read', path: 'secret.txt', offset: 1, limit: 5 })).toBe(`1\t${SECRET}`)
    const group = groups[0]
    if (sandbox !== undefined || group === undefined) return // inside bwrap the worker is a grandchild in another pid namespace
    const before = readdirSync(`/proc/${group}/fd`).length
    // The worker may hold 200 descriptors: a 300-folder path holds one per folder while it is resolved.
    execFileSync('prlimit', [`--pid=${group}`, '--nofile=200:200'])
    const deep = Array.from({ length: 300 }, () => 'd').join('/')
    await mkdir(path.join(s1, deep), { recursive: true })
    await writeFile(path.join(s1, deep, 'end.txt'), 'bottom\n')
    const attacks: FileOperation[] = [
      { op: 'read', path: `${deep}/end.txt`, offset: 1, limit: 5 },
      { op: 'write', path: `${deep}/new/w.txt`, content: 'x' },
      { op: 'list', path: deep },
      { op: 'grep', path: deep, pattern: 'bottom' },
    ]
    for (let round = 0; round < 5; round += 1) {
      for (const attack of attacks) expect(await outcome(one, attack)).toMatch(/^error:path_unresolvable$/)
      expect(await outcome(two, { op: 'read', path: 'secret.txt', offset: 1, limit: 5 })).toBe(`1\t${SECRET}`)
      expect(await outcome(two, { op: 'write', path: 'w.txt', content: 'sibling' })).toBe('Wrote 7 bytes to w.txt.')
    }
    expect(readdirSync(`/proc/${group}/fd`).length).toBe(before)
    expect(groups).toHaveLength(1) // the same worker, never replaced
  }, 20_000)

  it('answers a grep over a file of millions of matching lines within its memory, and serves the sibling next', async () => {
    // 4 MiB less a byte (grep's largest file) of empty lines, each a match of `^`: before the fix the worker built
    // all four million output lines before capping them and died out of heap (tool_crashed, after 5 s).
    await writeFile(path.join(s1, 'lines.txt'), '\n'.repeat(4 * 1024 * 1024 - 1))
    const started = Date.now()
    const text = await outcome(one, { op: 'grep', path: '.', pattern: '^' })
    expect(text).toContain('[Output capped; more matches exist.')
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(await outcome(two, { op: 'read', path: 'secret.txt', offset: 1, limit: 5 })).toBe(`1\t${SECRET}`)
    expect(groups).toHaveLength(1) // the grep did not crash the worker
  }, 20_000)

  it('edits every character of a 16 MiB file within its memory, and serves the sibling next', async () => {
    await writeFile(path.join(s1, 'big.txt'), 'a'.repeat(16 * 1024 * 1024))
    const text = await outcome(one, { op: 'edit', path: 'big.txt', oldText: 'a', newText: 'b', replaceAll: true })
    expect(text).toBe(`Replaced ${16 * 1024 * 1024} occurrences in big.txt.`)
    expect(await outcome(two, { op: 'read', path: 'secret.txt', offset: 1, limit: 5 })).toBe(`1\t${SECRET}`)
    expect(groups).toHaveLength(1)
  }, 20_000)

  it('matches a backtracking glob against thousands of long names within its time', async () => {
    await mkdir(path.join(s1, 'wide'))
    for (let index = 0; index < 1000; index += 1) await writeFile(path.join(s1, 'wide', `${'a'.repeat(250)}${index}`), '')
    const started = Date.now()
    expect(await outcome(one, { op: 'glob', path: 'wide', pattern: `${'*a'.repeat(12)}*b` })).toBe('No files match.')
    expect(await outcome(one, { op: 'grep', path: 'wide', pattern: 'x', glob: `${'*a'.repeat(12)}*b` })).toBe('No matches found.')
    expect(Date.now() - started).toBeLessThan(8_000)
    expect(await outcome(two, { op: 'read', path: 'secret.txt', offset: 1, limit: 5 })).toBe(`1\t${SECRET}`)
  }, 20_000)

  it('kills only the call that outruns its time, never the sibling\'s call in flight on another worker', async () => {
    pool.close()
    groups = []
    pool = createFileWorkerPool({ maxWorkersPerScope: 2, onWorkerStart: group => groups.push(group) })
    one = createFileWorker(s1, { tenant: 'acme', confineTo: tenant, pool, timeoutMs: 2_000, ...(sandbox ? { sandbox } : {}) })
    two = createFileWorker(s2, { tenant: 'acme', confineTo: tenant, pool, timeoutMs: 8_000, ...(sandbox ? { sandbox } : {}) })
    // A backreference the linear engine cannot run: exponential backtracking on each 40-character line.
    await writeFile(path.join(s1, 'slow.txt'), `${'a'.repeat(40)}!\n`.repeat(20))
    await writeFile(path.join(s2, 'many.txt'), 'x\n'.repeat(100_000))
    const slow = outcome(one, { op: 'grep', path: '.', pattern: '^(a|a)*\\1$' })
    const sibling = Array.from({ length: 20 }, () => outcome(two, { op: 'grep', path: '.', pattern: SECRET }))
    expect(await slow).toBe('error:tool_timeout')
    expect(await Promise.all(sibling)).toEqual(Array.from({ length: 20 }, () => `secret.txt:1: ${SECRET}`))
    expect(await outcome(one, { op: 'list', path: '.' })).toBe('slow.txt')
  }, 20_000)

  it('serves a sibling\'s call as soon as one worker comes free, however many slow calls the other session queued first', async () => {
    pool.close()
    pool = createFileWorkerPool({ maxWorkersPerScope: 2 })
    one = createFileWorker(s1, { tenant: 'acme', confineTo: tenant, pool, timeoutMs: 1_000, ...(sandbox ? { sandbox } : {}) })
    two = createFileWorker(s2, { tenant: 'acme', confineTo: tenant, pool, timeoutMs: 8_000, ...(sandbox ? { sandbox } : {}) })
    await writeFile(path.join(s1, 'slow.txt'), `${'a'.repeat(40)}!\n`.repeat(20))
    let settled = 0
    const slow = Array.from({ length: 8 }, () => outcome(one, { op: 'grep', path: '.', pattern: '^(a|a)*\\1$' }).finally(() => { settled += 1 }))
    await new Promise(resolve => setTimeout(resolve, 100)) // s1's calls are queued first
    expect(await outcome(two, { op: 'read', path: 'secret.txt', offset: 1, limit: 5 })).toBe(`1\t${SECRET}`)
    // Served after the first of s1's calls that ran out of time, not after all 8 of them (4 rounds of 1 s).
    expect(settled).toBeLessThanOrEqual(3)
    expect(await Promise.all(slow)).toEqual(Array.from({ length: 8 }, () => 'error:tool_timeout'))
  }, 30_000)
})

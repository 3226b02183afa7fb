import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { persistLargeOutput, PERSIST_OUTPUT_THRESHOLD_BYTES } from '../../src/agent/persist-output'
import { persistDirOf } from '../../src/cli/run-command'
import { loadServicesConfig } from '../../services/config'

let dir: string | undefined
afterEach(() => { if (dir) rmSync(dir, { recursive: true, force: true }); dir = undefined })
const folder = (): string => (dir ??= mkdtempSync(join(tmpdir(), 'zidane-persist-')))
const big = 'x'.repeat(PERSIST_OUTPUT_THRESHOLD_BYTES + 1)

describe('persisting tool outputs over the threshold', () => {
  it('persists a string output and points at its file', async () => {
    const result = await persistLargeOutput({ content: big }, folder(), 'tenant~s1', 'call-1')
    const path = join(folder(), 'tenant_s1', 'tool-results', 'call-1.txt')
    expect(result.content).toMatch(/^\[Output of 262145 bytes persisted to /)
    expect(readFileSync(path, 'utf8')).toBe(big)
  })

  it('persists content blocks too: their text to the .txt file, images also to a .json file', async () => {
    const text = await persistLargeOutput({ content: [{ type: 'text', text: big }, { type: 'text', text: 'tail' }] }, folder(), 's', 'c2')
    expect(typeof text.content).toBe('string')
    expect(readFileSync(join(folder(), 's', 'tool-results', 'c2.txt'), 'utf8')).toBe(`${big}\ntail`)
    const image = { type: 'image' as const, mediaType: 'image/png', data: big }
    const withImage = await persistLargeOutput({ content: [{ type: 'text', text: 'chart' }, image], isError: false }, folder(), 's', 'c3')
    expect(withImage).toMatchObject({ isError: false })
    expect(withImage.content).toContain('c3.json')
    expect(JSON.parse(readFileSync(join(folder(), 's', 'tool-results', 'c3.json'), 'utf8'))).toEqual([{ type: 'text', text: 'chart' }, image])
  })

  it('writes an output of several MiB whole, multibyte characters and surrogate pairs across piece boundaries included', async () => {
    // 1 MiB pieces: the emoji (two UTF-16 units, four bytes) and 'é' land on every alignment against a piece's end.
    const text = `${'a'.repeat(1024 * 1024 - 3)}${'é😀x'.repeat(400_000)}${'z'.repeat(1024 * 1024)}`
    const result = await persistLargeOutput({ content: text }, folder(), 's', 'multi')
    const written = readFileSync(join(folder(), 's', 'tool-results', 'multi.txt'))
    expect(written.equals(Buffer.from(text))).toBe(true)
    expect(result.content).toMatch(new RegExp(`^\\[Output of ${Buffer.byteLength(text)} bytes persisted to `))
  })

  it('writes concurrent outputs each to its own file, intact', async () => {
    const texts = ['a', 'b', 'c'].map(letter => `${letter}é`.repeat(1024 * 1024))
    await Promise.all(texts.map((text, index) => persistLargeOutput({ content: text }, folder(), 's', `concurrent-${index}`)))
    texts.forEach((text, index) => expect(readFileSync(join(folder(), 's', 'tool-results', `concurrent-${index}.txt`), 'utf8')).toBe(text))
  })

  it('measures the threshold in UTF-8 bytes, not characters', async () => {
    const under = 'é'.repeat(PERSIST_OUTPUT_THRESHOLD_BYTES / 2)
    expect(await persistLargeOutput({ content: under }, folder(), 's', 'under')).toEqual({ content: under })
    const over = await persistLargeOutput({ content: `${under}é` }, folder(), 's', 'over')
    expect(over.content).toMatch(new RegExp(`^\\[Output of ${PERSIST_OUTPUT_THRESHOLD_BYTES + 2} bytes persisted to `))
  })

  it('rejects when the file cannot be made, and writes again afterwards', async () => {
    const blocked = join(folder(), 'blocked')
    writeFileSync(blocked, 'a file where the session folder would go')
    await expect(persistLargeOutput({ content: big }, folder(), 'blocked', 'c6')).rejects.toThrow()
    await persistLargeOutput({ content: big }, folder(), 'free', 'c7')
    expect(readFileSync(join(folder(), 'free', 'tool-results', 'c7.txt'), 'utf8')).toBe(big)
  })

  it('leaves small outputs and runs without persistDir unchanged', async () => {
    const blocks = { content: [{ type: 'text' as const, text: 'short' }] }
    expect(await persistLargeOutput(blocks, folder(), 's', 'c4')).toBe(blocks)
    expect(await persistLargeOutput({ content: big }, undefined, 's', 'c5')).toEqual({ content: big })
  })

  it('is on by default in the services (each session\'s workspace unless ZIDANE_PERSIST_DIR) and the CLI (next to the sessions file)', () => {
    expect(loadServicesConfig({ ZIDANE_WORKSPACE_ROOT: '/data/workspaces' }).persistDir).toBeUndefined()
    expect(loadServicesConfig({ ZIDANE_WORKSPACE_ROOT: '/w', ZIDANE_PERSIST_DIR: '/p' }).persistDir).toBe('/p')
    expect(persistDirOf('/home/me/sessions.db')).toBe('/home/me/sessions.db.outputs')
  })
})

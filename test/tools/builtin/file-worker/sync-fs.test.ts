import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { constants } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { open, opendir } from '../../../../src/tools/builtin/file-worker/sync-fs'

function openDescriptors(): number {
  return readdirSync('/proc/self/fd').length
}

describe.runIf(process.platform === 'linux')('the file worker\'s synchronous file calls', () => {
  let folder: string
  beforeEach(() => { folder = mkdtempSync(path.join(tmpdir(), 'zidane-sync-fs-')) })
  afterEach(() => { rmSync(folder, { recursive: true, force: true }) })

  it('closes a handle once, however often it is closed: a descriptor reused since is left open', async () => {
    writeFileSync(path.join(folder, 'a'), 'first')
    writeFileSync(path.join(folder, 'b'), 'second')
    const first = await open(path.join(folder, 'a'), constants.O_RDONLY)
    await first.close()
    const second = await open(path.join(folder, 'b'), constants.O_RDONLY)
    expect(second.fd).toBe(first.fd) // the lowest free number, taken again
    await first.close()
    const buffer = Buffer.alloc(6)
    expect((await second.read(buffer, 0, 6, 0)).bytesRead).toBe(6)
    expect(buffer.toString()).toBe('second')
    await second.close()
  })

  it('reads and writes at the file\'s position when given none, and writes a whole buffer from there', async () => {
    const file = path.join(folder, 'lines')
    writeFileSync(file, 'abcdef')
    const handle = await open(file, constants.O_RDWR)
    try {
      const buffer = Buffer.alloc(3)
      await handle.read(buffer, 0, 3, 4) // at a position: the file's own stays
      expect(buffer.subarray(0, 2).toString()).toBe('ef')
      await handle.read(buffer, 0, 3, null)
      expect(buffer.toString()).toBe('abc')
      await handle.writeFile(Buffer.from('XYZW'))
      await handle.truncate(5)
    } finally {
      await handle.close()
    }
    expect(readFileSync(file, 'utf8')).toBe('abcXY')
  })

  it('closes a folder read to its end, left early or left by a throw', async () => {
    for (let index = 0; index < 50; index++) writeFileSync(path.join(folder, `f${index}`), '')
    mkdirSync(path.join(folder, 'sub'))
    const before = openDescriptors()
    for (let round = 0; round < 20; round++) {
      for await (const entry of await opendir(folder)) expect(entry.name).not.toBe('')
      for await (const entry of await opendir(folder)) if (entry.name !== '') break
      await expect((async () => { for await (const entry of await opendir(folder)) throw new Error(entry.name) })()).rejects.toThrow()
    }
    expect(openDescriptors()).toBe(before)
  })
})

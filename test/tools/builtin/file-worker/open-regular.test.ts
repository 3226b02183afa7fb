import { mkdtemp, open, rm, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readAtMost } from '../../../../src/tools/builtin/file-worker/open-regular'

describe('reading a tenant\'s file with a bound', () => {
  let folder: string
  beforeEach(async () => { folder = await mkdtemp(path.join(tmpdir(), 'zidane-read-at-most-')) })
  afterEach(async () => { await rm(folder, { recursive: true, force: true }) })

  it('reads a file within the bound whole', async () => {
    const file = path.join(folder, 'small.txt')
    await writeFile(file, 'x'.repeat(3 * 1024 * 1024 + 17))
    const handle = await open(file)
    try {
      expect((await readAtMost(handle, 4 * 1024 * 1024))?.length).toBe(3 * 1024 * 1024 + 17)
      expect((await readAtMost(handle, 3 * 1024 * 1024 + 17))?.length).toBe(3 * 1024 * 1024 + 17)
    } finally {
      await handle.close()
    }
  })

  it('stops one byte past the bound of a file that grew (sparse, 1.5 GiB) after it was measured, allocating nothing of it', async () => {
    const file = path.join(folder, 'grows.txt')
    await writeFile(file, 'small\n')
    const handle = await open(file)
    try {
      const measured = (await handle.stat()).size
      await truncate(file, 1536 * 1024 * 1024) // the tenant's shell, between the size check and the read
      const heapBefore = process.memoryUsage().arrayBuffers
      expect(await readAtMost(handle, 4 * 1024 * 1024)).toBeNull()
      expect(measured).toBe(6)
      expect(process.memoryUsage().arrayBuffers - heapBefore).toBeLessThan(64 * 1024 * 1024)
    } finally {
      await handle.close()
    }
  })
})

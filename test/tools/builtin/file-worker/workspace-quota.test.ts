import { mkdir, symlink, writeFile } from 'node:fs/promises'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { assertUnderQuota, measureWorkspaceUsage, measureWorkspaceUsageSync, WorkspaceQuotaError } from '../../../../src/tools/builtin/file-worker/workspace-quota'
import { useSandbox } from '../tool-context'

const MIB = 1024 * 1024

describe('assertUnderQuota', () => {
  const folders = useSandbox()

  it('counts the disk the workspace uses and refuses once it is over the quota', async () => {
    await writeFile(path.join(folders.root, 'a'), Buffer.alloc(MIB, 1))
    await expect(assertUnderQuota(folders.root, 2 * MIB)).resolves.toMatchObject({ entries: 1 })
    const refused = await assertUnderQuota(folders.root, MIB / 2).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(WorkspaceQuotaError)
    expect((refused as WorkspaceQuotaError).message).toBe('The workspace uses 1 MiB, over its quota of 0.5 MiB: delete files to make room before writing more.')
  })

  it('follows no link out of the workspace', async () => {
    await writeFile(path.join(folders.outside, 'big'), Buffer.alloc(2 * MIB, 1))
    await symlink(folders.outside, path.join(folders.root, 'out'))
    expect((await measureWorkspaceUsage(folders.root)).bytes).toBeLessThan(MIB)
  })

  it('stops at its depth and entry bounds, and a tree past them counts as over the quota', async () => {
    let deep = folders.root
    for (let level = 0; level < 12; level++) deep = path.join(deep, 'd')
    await mkdir(deep, { recursive: true })
    await expect(assertUnderQuota(folders.root, MIB, { maxDepth: 8 })).rejects.toThrow('The workspace has folders nested deeper than 8 levels, over its quota')
    for (let index = 0; index < 30; index++) await writeFile(path.join(folders.root, `f${index}`), '')
    await expect(assertUnderQuota(folders.root, MIB, { maxEntries: 20 })).rejects.toThrow('The workspace holds more than 20 files and folders, over its quota')
    expect(await measureWorkspaceUsage(folders.root, { maxEntries: 20 })).toMatchObject({ entries: 20, cutShort: 'entries' })
  })

  it('stops at its time bound: a workspace it cannot measure in time counts as over the quota', async () => {
    for (let index = 0; index < 200; index++) await mkdir(path.join(folders.root, `d${index}`))
    await expect(assertUnderQuota(folders.root, MIB, { maxMs: 0 })).rejects.toThrow('could not be measured within 0 ms')
  })
})

describe('measureWorkspaceUsageSync (the file worker\'s walk)', () => {
  const folders = useSandbox()

  it('measures what the asynchronous walk measures, links not followed', async () => {
    await writeFile(path.join(folders.outside, 'big'), Buffer.alloc(2 * MIB, 1))
    await symlink(folders.outside, path.join(folders.root, 'out'))
    await mkdir(path.join(folders.root, 'a', 'b'), { recursive: true })
    await writeFile(path.join(folders.root, 'a', 'b', 'c'), Buffer.alloc(MIB / 4, 1))
    for (let index = 0; index < 40; index++) await writeFile(path.join(folders.root, 'a', `f${index}`), `${index}`)
    const usage = measureWorkspaceUsageSync(folders.root)
    expect(usage).toEqual(await measureWorkspaceUsage(folders.root))
    expect(usage.entries).toBe(44)
    expect(usage.bytes).toBeLessThan(MIB)
  })

  it('stops at its depth, entry and time bounds', async () => {
    let deep = folders.root
    for (let level = 0; level < 12; level++) deep = path.join(deep, 'd')
    await mkdir(deep, { recursive: true })
    expect(measureWorkspaceUsageSync(folders.root, { maxDepth: 8 }).cutShort).toBe('depth')
    for (let index = 0; index < 30; index++) await writeFile(path.join(folders.root, `f${index}`), '')
    expect(measureWorkspaceUsageSync(folders.root, { maxEntries: 20 })).toMatchObject({ entries: 20, cutShort: 'entries' })
    expect(measureWorkspaceUsageSync(folders.root, { maxMs: 0 }).cutShort).toBe('time')
  })
})

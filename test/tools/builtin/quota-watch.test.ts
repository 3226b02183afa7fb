import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { watchWorkspaceQuota } from '../../../src/tools/builtin/quota-watch'

describe('watchWorkspaceQuota', () => {
  let workspace = ''
  afterEach(() => { rmSync(workspace, { recursive: true, force: true }) })

  const exceededWithin = async (quotaBytes: number, options: Parameters<typeof watchWorkspaceQuota>[3], act: () => void): Promise<string | undefined> => {
    let stopped: () => void = () => undefined
    const fired = new Promise<void>(resolve => { stopped = resolve })
    const watch = await watchWorkspaceQuota(workspace, quotaBytes, () => stopped(), { intervalMs: 20, ...options })
    act()
    await Promise.race([fired, new Promise(resolve => setTimeout(resolve, 500))])
    watch.stop()
    return watch.exceeded
  }

  it('stops a command when the workspace grows past its quota', async () => {
    workspace = mkdtempSync(join(tmpdir(), 'zidane-quota-watch-'))
    expect(await exceededWithin(64 * 1024, {}, () => writeFileSync(join(workspace, 'big'), Buffer.alloc(256 * 1024, 1)))).toMatch(/over its quota/)
  })

  it('stops a command when the disk falls below its floor, whatever the workspace holds (files deleted while held open)', async () => {
    workspace = mkdtempSync(join(tmpdir(), 'zidane-quota-watch-'))
    expect(await exceededWithin(1024 * 1024 * 1024, { diskFloorBytes: Number.MAX_SAFE_INTEGER }, () => undefined)).toMatch(/almost full/)
    expect(await exceededWithin(1024 * 1024 * 1024, { diskFloorBytes: 1 }, () => undefined)).toBeUndefined()
  })
})

import { existsSync, readdirSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createFileStartLog } from '../../src/restate/start-log'

describe('the file start log of at-most-once steps', () => {
  const folders: string[] = []
  afterEach(async () => { for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true }) })
  const folder = async (): Promise<string> => {
    const made = await mkdtemp(join(tmpdir(), 'zidane-starts-'))
    folders.push(made)
    return join(made, 'starts')
  }

  it('tells a step marked by an earlier log instance (another process) until it is forgotten', async () => {
    const path = await folder()
    expect(await createFileStartLog(path).markStarted('inv_1', 'run_1/tool/t1/toolu_1')).toBe(false)
    const later = createFileStartLog(path)
    expect(await later.markStarted('inv_1', 'run_1/tool/t1/toolu_1')).toBe(true)
    expect(await later.markStarted('inv_1', 'run_1/tool/t1/toolu_2')).toBe(false)
    expect(await later.markStarted('inv_2', 'run_1/tool/t1/toolu_1')).toBe(false)
    for (const [invocation, step] of [['inv_1', 'run_1/tool/t1/toolu_1'], ['inv_1', 'run_1/tool/t1/toolu_2'], ['inv_2', 'run_1/tool/t1/toolu_1']] as const) await later.forget(invocation, step)
    expect(readdirSync(path)).toEqual([])
    expect(await later.markStarted('inv_1', 'run_1/tool/t1/toolu_1')).toBe(false)
  })

  it('creates its folder and forgets a mark that was never made without failing', async () => {
    const path = await folder()
    const log = createFileStartLog(path)
    expect(existsSync(path)).toBe(true)
    await expect(log.forget('inv_1', 'never')).resolves.toBeUndefined()
  })
})

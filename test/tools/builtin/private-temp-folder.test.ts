import { chownSync, existsSync, mkdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createPrivateTempFolder } from '../../../src/tools/builtin/private-temp-folder'

const DEAD_PID = 4_000_000 // above pid_max: never a running process

describe('createPrivateTempFolder', () => {
  it('creates a 0700 folder and removes the leftovers of dead processes that are its own user', () => {
    const leftover = join(tmpdir(), `zidane-test-private-${DEAD_PID}-own`)
    mkdirSync(join(leftover, 'sub'), { recursive: true })
    const folder = createPrivateTempFolder('zidane-test-private-')
    expect(statSync(folder).mode & 0o777).toBe(0o700)
    expect(existsSync(leftover)).toBe(false)
    rmSync(folder, { recursive: true })
  })

  it.skipIf(process.getuid?.() !== 0)("neither fails nor deletes when another user planted a leftover's name", () => {
    const planted = join(tmpdir(), `zidane-test-planted-${DEAD_PID}-x`)
    mkdirSync(join(planted, 'sub'), { recursive: true, mode: 0o700 })
    chownSync(planted, 65534, 65534)
    try {
      const folder = createPrivateTempFolder('zidane-test-planted-')
      expect(existsSync(join(planted, 'sub'))).toBe(true)
      rmSync(folder, { recursive: true })
    } finally {
      rmSync(planted, { recursive: true, force: true })
    }
  })
})

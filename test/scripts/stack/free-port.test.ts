import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { claimPort, freePort, freePorts } from '../../../scripts/stack/free-port'

describe('free loopback ports for test stacks', () => {
  it('hands out distinct ports below the ephemeral range and never one this process still claims, even once it is free again', async () => {
    const ports = await freePorts(20)
    expect(new Set(ports).size).toBe(20)
    for (const port of ports) expect(port).toBeLessThan(32_768)
    // Nothing binds them now (a killed child's port, before it restarts): still not free for anyone else.
    for (const port of ports) expect(claimPort(port)).toBe(false)
    const more = await freePorts(20)
    expect(more.filter(port => ports.includes(port))).toEqual([])
  })

  it('takes over the claim of a process that has exited', async () => {
    const port = await freePort()
    const dead = spawnSync(process.execPath, ['-e', 'process.exit(0)']).pid
    writeFileSync(join(tmpdir(), 'zidane-port-claims', String(port)), String(dead))
    expect(claimPort(port)).toBe(true)
    expect(claimPort(port)).toBe(false)
  })
})

import { existsSync, mkdirSync, readdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { sandboxEgress } from '../../../src/tools/builtin/sandbox-egress'

/** A pid no process has: above the kernel's pid_max. */
const DEAD_PID = 2 ** 22 + 1

describe('the egress proxy of a sandbox', () => {
  it('starts on first use in a private folder named by this process, and removes the folders of dead processes', () => {
    const left = join(tmpdir(), `zidane-egress-${DEAD_PID}-left`)
    mkdirSync(left, { recursive: true })
    const egress = sandboxEgress({ allowDomains: ['example.com'] })
    const args = egress.bwrapArguments()
    const socket = args[1] as string
    expect(args.slice(0, 3)).toEqual(['--bind', socket, '/run/zidane/egress.sock'])
    expect(socket).toMatch(new RegExp(`^${tmpdir()}/zidane-egress-${process.pid}-[^/]+/proxy\\.sock$`))
    expect(existsSync(socket)).toBe(true)
    expect(existsSync(left)).toBe(false)
    expect(egress.bwrapArguments()[1]).toBe(socket)
    expect(readdirSync(tmpdir()).filter(name => name.startsWith(`zidane-egress-${process.pid}-`)).length).toBeGreaterThan(0)
  })
})

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { findCgroupRoots } from '../../../src/tools/builtin/cgroup-roots'
import { createCommandCgroup } from '../../../src/tools/builtin/tenant-cgroups'
import { useSandbox } from './tool-context'

const MIB = 1024 * 1024
const limits = { allTenants: { memoryBytes: 4096 * MIB, maxProcesses: 2000 }, tenant: { memoryBytes: 300 * MIB, maxProcesses: 70, cpuPercent: 50 }, command: { memoryBytes: 200 * MIB, maxProcesses: 40 } }

/** A line of /proc/self/mountinfo for a cgroup file system mounted at `point`, showing the hierarchy from `root`. */
function mountLine(type: 'cgroup' | 'cgroup2', point: string, superOptions: string, root = '/'): string {
  return `40 31 0:35 ${root} ${point} rw,relatime shared:1 - ${type} ${type} rw,${superOptions}`
}

describe('the cgroups of tenants and commands', () => {
  const folders = useSandbox()
  const read = (...parts: string[]): string => readFileSync(path.join(...parts), 'utf8')

  it('nest under this process\'s own v1 cgroups, or the mount\'s root when it shows only a part of the hierarchy', () => {
    for (const name of ['memory/services', 'pids', 'cpu']) mkdirSync(path.join(folders.root, name), { recursive: true })
    const mountinfo = [mountLine('cgroup', `${folders.root}/memory`, 'memory'), mountLine('cgroup', `${folders.root}/pids`, 'pids', '/docker/abc'), mountLine('cgroup', `${folders.root}/cpu`, 'cpu,cpuacct')].join('\n')
    const ownCgroups = '5:memory:/services\n4:pids:/docker/abc\n3:cpu,cpuacct:/elsewhere\n0::/'
    expect(findCgroupRoots({ mountinfo, ownCgroups })).toEqual([
      { folder: `${folders.root}/memory/services`, version: 1, controllers: ['memory'] },
      { folder: `${folders.root}/pids`, version: 1, controllers: ['pids'] },
      { folder: `${folders.root}/cpu`, version: 1, controllers: ['cpu'] },
    ])
  })

  it('on cgroup v2: hand the controllers down each level and set memory.max, pids.max and cpu.max', () => {
    writeFileSync(path.join(folders.root, 'cgroup.controllers'), 'cpuset cpu io memory pids\n')
    writeFileSync(path.join(folders.root, 'cgroup.subtree_control'), '')
    const roots = findCgroupRoots({ mountinfo: mountLine('cgroup2', folders.root, 'nsdelegate'), ownCgroups: '0::/user.slice' })
    expect(roots).toEqual([{ folder: folders.root, version: 2, controllers: ['memory', 'pids', 'cpu'] }])
    // A plain folder stands for the cgroup file system: the kernel would give each new cgroup its controller list.
    const top = path.join(folders.root, 'zidane-sandbox')
    mkdirSync(top)
    writeFileSync(path.join(top, 'cgroup.controllers'), 'memory pids cpu')
    writeFileSync(path.join(top, 'cgroup.subtree_control'), '')
    const tenant = path.join(top, `tenant-${'9f86d081884c7d65'}`)
    mkdirSync(tenant)
    writeFileSync(path.join(tenant, 'cgroup.controllers'), 'memory pids cpu')
    writeFileSync(path.join(tenant, 'cgroup.subtree_control'), '')
    const cgroup = createCommandCgroup(roots, 'test', limits)
    const command = cgroup?.folders[0] ?? ''
    expect(path.dirname(command)).toBe(tenant)
    expect([read(top, 'memory.max'), read(top, 'pids.max'), read(top, 'cpu.max'), read(top, 'cgroup.subtree_control')]).toEqual([String(4096 * MIB), '2000', 'max 100000', '+memory +pids +cpu'])
    expect([read(tenant, 'memory.max'), read(tenant, 'pids.max'), read(tenant, 'cpu.max'), read(tenant, 'cgroup.subtree_control')]).toEqual([String(300 * MIB), '70', '50000 100000', '+memory +pids +cpu'])
    expect([read(command, 'memory.max'), read(command, 'pids.max'), read(command, 'cpu.max')]).toEqual([String(200 * MIB), '40', 'max 100000'])
  })

  it('on this host: set the limits of the tenant and the command, and are removed once released', async () => {
    const roots = findCgroupRoots()
    const memory = roots.find(root => root.controllers.includes('memory'))
    expect(memory?.version).toBe(1)
    const cgroup = createCommandCgroup(roots, 'limits-test', limits)
    const command = cgroup?.folders[roots.indexOf(memory ?? roots[0] as never)] ?? ''
    const tenant = path.dirname(command)
    expect([read(tenant, 'memory.limit_in_bytes'), read(command, 'memory.limit_in_bytes')]).toEqual([`${300 * MIB}\n`, `${200 * MIB}\n`])
    cgroup?.release()
    await vi.waitFor(() => { expect(existsSync(tenant)).toBe(false) }, { timeout: 5000, interval: 20 })
  })
})
